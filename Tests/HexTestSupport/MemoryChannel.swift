import HexNet
import Synchronization

/// One end of a connection held in memory (`MemoryChannel.pair()`): what one end writes the other
/// reads, in order. `shutdown` on either end ends both ways (its own unread bytes dropped, as a
/// socket shut both ways reads its end at once); `shutdownWrite` ends one way, as a TCP FIN does;
/// an end let go of is shut down, as a socket is closed when its owner lets go of it.
/// It lets a test drive a whole carrier, from its handshake to what it keeps, without sockets. A
/// read with nothing to take looks again every millisecond until its timeout; a write never waits
/// (nothing bounds what one side holds unread, so no test of back-pressure or of a write's timeout
/// can use it).
public final class MemoryChannel: ByteChannel {
    /// The bytes one way, and whether that way ended.
    private final class Direction: Sendable {
        let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
    }

    /// Writing to a connection that ended.
    public struct Ended: Error {
        public init() {}
    }

    private let incoming: Direction
    private let outgoing: Direction
    public let remoteEndpoint: Endpoint?

    private init(incoming: Direction, outgoing: Direction, remote: Endpoint?) {
        (self.incoming, self.outgoing, remoteEndpoint) = (incoming, outgoing, remote)
    }

    /// Two ends of one connection: the first is `client`'s, the second `server`'s, and each names
    /// the other's as its remote end.
    public static func pair(client: Endpoint? = nil, server: Endpoint? = nil) -> (MemoryChannel, MemoryChannel) {
        let (there, back) = (Direction(), Direction())
        return (
            MemoryChannel(incoming: back, outgoing: there, remote: server),
            MemoryChannel(incoming: there, outgoing: back, remote: client)
        )
    }

    deinit { shutdown() }

    public var isQuietAndOpen: Bool {
        incoming.state.withLock { $0.bytes.isEmpty && !$0.ended }
    }

    public func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void)
        async throws -> Int
    {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let taken = incoming.state.withLock { state -> [UInt8]? in
                guard state.bytes.isEmpty else {
                    let count = min(maximumCount, state.bytes.count)
                    defer { state.bytes.removeFirst(count) }
                    return Array(state.bytes.prefix(count))
                }
                return state.ended ? [] : nil
            }
            if let taken {
                if !taken.isEmpty { taken.withUnsafeBufferPointer(take) }
                return taken.count
            }
            if let deadline, ContinuousClock.now >= deadline { throw SocketError.timedOut("read from memory") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    public func write(_ bytes: [UInt8], timeout: Duration?) async throws {
        let ended = outgoing.state.withLock { state in
            if !state.ended { state.bytes += bytes }
            return state.ended
        }
        if ended { throw Ended() }
    }

    public func shutdown() {
        incoming.state.withLock { $0 = ([], true) }
        outgoing.state.withLock { $0.ended = true }
    }

    public func shutdownWrite() {
        outgoing.state.withLock { $0.ended = true }
    }

    public func waitForPeerClose() async {
        while !Task.isCancelled, !incoming.state.withLock(\.ended) {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
