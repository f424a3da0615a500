import HexStore
import Synchronization

/// The keys pinned to peers (nil: none), as the store last said, kept so that a sighting of a
/// peer seen before costs no hop to the store's thread. The store tells it what each write to the
/// pins did, as it does it (`apply`).
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

    /// Takes what a write to the pinned keys did: a peer's new key, or none, is known at once (a
    /// peer just pinned on first use is not read again while a flood fills the store's queue); a
    /// pin that may have changed is read again. Reads under way when it came are not kept.
    func apply(_ changes: [PinChange]) {
        state.withLock { state in
            state.generation += 1
            for change in changes {
                switch change {
                case .pinned(let uuid, let fingerprint):
                    state.keys[uuid] = nil
                    state.keys[uuid.uppercased()] = .some(fingerprint)
                case .removed(let uuid):
                    state.keys[uuid] = nil
                    state.keys[uuid.uppercased()] = .some(nil)
                case .unknown(let uuid):
                    state.keys[uuid] = nil
                    state.keys[uuid.uppercased()] = nil
                }
            }
        }
    }
}
