import Synchronization

/// The keys pinned to peers (nil: none), as the store last said, kept so that a sighting of a
/// peer seen before costs no hop to the store's thread. The store forgets the peers whose pins it
/// changes, as it changes them; only they are read again.
///
/// Any thread may use it. A read of the store races a change: what was read is kept only if no
/// pin changed since `generation` was taken before the read.
final class PinCache: Sendable {
    private struct State {
        var generation = 0
        var keys: [String: String?] = [:]
    }

    private let state = Mutex(State())
    /// Past this many peers, the cache keeps only those `keep` is told to.
    static let limit = 4_096

    /// Counts the changes so far: taken before a read of the store, handed to `keep` after it.
    var generation: Int { state.withLock(\.generation) }

    /// The key pinned to `uuid` (nil: none) if it is known; nil if it must be read from the store.
    func key(of uuid: String) -> String?? {
        state.withLock { $0.keys[uuid] }
    }

    /// Keeps keys read from the store, unless a pin changed since `generation`. Past `limit`, it
    /// keeps only the peers `keeping` names: a flood of invented IDs cannot push out the peers
    /// listed.
    func keep(_ read: [String: String?], readAt generation: Int, trimmingTo keeping: (String) -> Bool) {
        state.withLock { state in
            guard state.generation == generation else { return }
            state.keys.merge(read) { $1 }
            if state.keys.count > Self.limit { state.keys = state.keys.filter { keeping($0.key) } }
        }
    }

    /// Forgets what it knows of these peers: their pins changed (any spelling of their IDs).
    func forget(_ uuids: [String]) {
        state.withLock { state in
            state.generation += 1
            for uuid in uuids {
                state.keys[uuid] = nil
                state.keys[uuid.uppercased()] = nil
            }
        }
    }
}
