/// A connection a carrier may be handed whatever carries it: a socket, or a test's memory
/// (HexTestSupport's `MemoryChannel`), so that a test drives a whole carrier without sockets, as
/// swift-nio's `EmbeddedChannel` lets one drive a handler.
public protocol ByteChannel: ByteStream, Sendable {
    /// Where the connection comes from (`192.0.2.1:53317`); nil when nothing says.
    var remoteEndpoint: Endpoint? { get }

    /// Whether the connection is idle and still open, checked without waiting: nothing to read and
    /// no end from the other side.
    var isQuietAndOpen: Bool { get }

    /// Ends the connection both ways: the other side reads its end, and a task waiting to read here
    /// wakes to the end of the stream.
    func shutdown()

    /// Stops sending only: the other side reads the end of the stream, and can still answer.
    func shutdownWrite()

    /// Returns when the other side has stopped sending (whatever it sent before is still unread) or
    /// the connection failed, or when the task is cancelled; reads nothing.
    func waitForPeerClose() async
}

extension ByteChannel {
    /// A connection is the connection underneath itself.
    public var channel: any ByteChannel { self }
}

extension Socket: ByteChannel {}
