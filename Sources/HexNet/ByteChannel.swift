/// Bytes both ways over one connection, whatever carries them: a socket, or a test's memory
/// (HexTestSupport's `MemoryChannel`), so that a test drives a whole carrier without sockets, as
/// swift-nio's `EmbeddedChannel` lets one drive a handler.
public protocol ByteChannel: AnyObject, Sendable {
    /// Reads what is available, at most `maximumCount` bytes, and hands them to `take` (valid only
    /// during the call); waits while nothing is.
    /// - Parameter timeout: how long one wait may last (then `SocketError.timedOut`); nil waits forever.
    /// - Returns: how many bytes were read, 0 at the end of the stream.
    func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void) async throws -> Int

    /// Writes all of `bytes`, waiting whenever the other side is not reading.
    func write(_ bytes: [UInt8], timeout: Duration?) async throws

    /// Ends the connection both ways: the other side reads its end.
    func shutdown()
}

extension Socket: ByteChannel {}
