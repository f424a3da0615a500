import HexControl
import HexKit

/// The daemon's events, numbered from 1, with the most recent ones kept for watchers that
/// resume (`since`), and live delivery to every watcher.
actor EventLog {
    /// How many past events a resuming watcher can still get.
    static let retained = 1_000

    private var nextSequence: UInt64 = 1
    /// The retained events, and up to as many older ones again: they are dropped in bulk, so
    /// that recording an event never shifts the whole list.
    private var recent: [DaemonEvent] = []
    private var watchers: [UUID: Watcher] = [:]

    private struct Watcher {
        let continuation: AsyncStream<DaemonEvent>.Continuation
        /// The kinds it is given; nil for all.
        let kinds: Set<DaemonEvent.Kind>?

        func offer(_ event: DaemonEvent) {
            if kinds?.contains(event.kind) ?? true { continuation.yield(event) }
        }
    }

    /// An event to record, before it has its number and time.
    struct Draft: Sendable {
        let kind: DaemonEvent.Kind
        let peerUUID: String?
        let peer: String?
        let versionID: String?
        let id: String?
        let message: String?

        init(
            _ kind: DaemonEvent.Kind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil,
            id: String? = nil, message: String? = nil
        ) {
            self.kind = kind
            self.peerUUID = peerUUID
            self.peer = peer
            self.versionID = versionID
            self.id = id
            self.message = message
        }
    }

    /// Records an event and hands it to every watcher.
    func publish(
        _ kind: DaemonEvent.Kind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil,
        id: String? = nil, message: String? = nil
    ) {
        publish([Draft(kind, peerUUID: peerUUID, peer: peer, versionID: versionID, id: id, message: message)])
    }

    /// Records events in this order and hands each to every watcher.
    func publish(_ drafts: [Draft]) {
        let time = Date()
        for draft in drafts {
            let event = DaemonEvent(
                seq: nextSequence, kind: draft.kind, time: time, peerUUID: draft.peerUUID, peer: draft.peer,
                versionID: draft.versionID, id: draft.id, message: draft.message)
            nextSequence += 1
            if recent.count >= 2 * Self.retained { recent.removeFirst(recent.count - Self.retained) }
            recent.append(event)
            for watcher in watchers.values { watcher.offer(event) }
        }
    }

    /// The retained events after `since`, then every new one as it happens.
    ///
    /// - Parameter kinds: the kinds wanted; nil for all. A watcher that wants few kinds is not
    ///   woken by the others, and they cannot crowd the few out of its buffer.
    func watch(since: UInt64, kinds: Set<DaemonEvent.Kind>? = nil) -> AsyncStream<DaemonEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DaemonEvent.self, bufferingPolicy: .bufferingNewest(Self.retained))
        let watcher = Watcher(continuation: continuation, kinds: kinds)
        for event in recent.suffix(Self.retained) where event.seq > since { watcher.offer(event) }
        let id = UUID()
        watchers[id] = watcher
        continuation.onTermination = { _ in Task { await self.stopWatching(id) } }
        return stream
    }

    private func stopWatching(_ id: UUID) {
        watchers[id] = nil
    }
}
