/// A connection a carrier may be handed whatever carries it: a socket, or a test's memory
/// (HexTestSupport's `MemoryChannel`), so that a test drives a whole carrier without sockets, as
/// swift-nio's `EmbeddedChannel` lets one drive a handler.
public protocol ByteChannel: ByteTransfer, Sendable {
    /// Ends the connection both ways: the other side reads its end.
    func shutdown()
}

extension Socket: ByteChannel {}
