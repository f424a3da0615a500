import Glibc

/// A failed system call on a socket, with what was being done.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted, in words ("connect to 10.0.0.2:18521").
    public let operation: String
    /// The `errno` value, or 0 for failures that have none (a timeout, a bad address).
    public let code: Int32
    let reason: String?

    /// The error for the current `errno`.
    init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
        self.reason = nil
    }

    /// An error of the kind `code` names, for a reason of hexd's own rather than the system's.
    init(_ operation: String, code: Int32, reason: String) {
        self.operation = operation
        self.code = code
        self.reason = reason
    }

    /// An error that is not an `errno` value.
    init(_ operation: String, reason: String) {
        self.operation = operation
        self.code = 0
        self.reason = reason
    }

    /// The wait for the socket took longer than allowed.
    public static func timedOut(_ operation: String) -> SocketError { SocketError(operation, reason: "timed out") }

    public var isTimeout: Bool { code == 0 && reason == "timed out" }

    /// The address (a port) is taken by another socket.
    public var isAddressInUse: Bool { code == EADDRINUSE }

    public var description: String {
        "cannot \(operation): " + reasonText
    }

    /// Why, without what was attempted ("Connection refused", "timed out").
    public var reasonText: String { reason ?? String(cString: strerror(code)) }
}
