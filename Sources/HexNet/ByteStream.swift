/// Reading and writing bytes over one connection, whatever carries them.
public protocol ByteTransfer: AnyObject {
    /// Reads what is available, at most `maximumCount` bytes, and hands them to `take` (valid only
    /// during the call); waits while nothing is.
    /// - Parameter timeout: how long one wait may last (then `SocketError.timedOut`); nil waits forever.
    /// - Returns: how many bytes were read, 0 at the end of the stream.
    func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void) async throws -> Int

    /// Writes all of `bytes`, waiting whenever the other side is not reading.
    func write(_ bytes: [UInt8], timeout: Duration?) async throws
}

/// Bytes both ways over one connection: the connection itself (a socket, a test's memory), or a
/// secure channel over it. `StreamConnection` frames lines over any of them.
public protocol ByteStream: ByteTransfer {
    /// The connection underneath (its identity keys connection tables and budgets).
    var channel: any ByteChannel { get }
}
