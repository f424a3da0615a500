import HexEngine
import HexNet
import Synchronization

/// The connections in their TLS handshake, at most `capacity` at once. A newcomer past it is not
/// refused: the connection whose handshake began longest ago is closed to make room. An honest
/// client completes its handshake within milliseconds, so a storm of bare ClientHellos (which
/// never finish) only ever closes its own connections, and each costs the daemon one handshake's
/// memory for as long as the storm leaves it room.
package final class HandshakeTable: Sendable {
    let capacity: Int

    private struct State {
        var channels: [ObjectIdentifier: any ByteChannel] = [:]
        var started = RecencyList<ObjectIdentifier>()
    }

    private let state = Mutex(State())

    package init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// Notes that `channel` begins its handshake. Returns true when another connection's
    /// handshake was closed to make room for it.
    package func begin(_ channel: any ByteChannel) -> Bool {
        let evicted = state.withLock { state -> (any ByteChannel)? in
            var evicted: (any ByteChannel)?
            if state.channels.count >= capacity, let oldest = state.started.oldest {
                state.started.remove(oldest)
                evicted = state.channels.removeValue(forKey: oldest)
            }
            state.channels[ObjectIdentifier(channel)] = channel
            state.started.touch(ObjectIdentifier(channel))
            return evicted
        }
        // Wakes the evicted handshake's read, which then fails and ends the connection.
        evicted?.shutdown()
        return evicted != nil
    }

    /// Notes that `channel`'s handshake ended, however it ended.
    package func end(_ channel: any ByteChannel) {
        state.withLock { state in
            state.channels[ObjectIdentifier(channel)] = nil
            state.started.remove(ObjectIdentifier(channel))
        }
    }
}
