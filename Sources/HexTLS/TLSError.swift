import COpenSSL

/// A TLS operation that failed: what was attempted, and why (OpenSSL's error queue, or ours).
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public let operation: String
    public let reason: String

    public init(_ operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    /// The failure OpenSSL just reported: its error queue, emptied (so it cannot leak into the
    /// next operation's report).
    static func openSSL(_ operation: String) -> TLSError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return TLSError(operation, reason: reasons.isEmpty ? "no reason given" : reasons.joined(separator: "; "))
    }

    public var description: String { "cannot \(operation): \(reason)" }
}
