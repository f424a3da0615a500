import HexControl
import HexKit

/// The daemon's events, numbered from 1, with the most recent ones kept for watchers that
/// resume (`since`), and live delivery to every watcher.
actor EventLog {
    /// How many past events a resuming watcher can still get.
    static let retained = 1_000

    private var nextSequence: UInt64 = 1
    private var recent: [DaemonEvent] = []
    private var watchers: [UUID: AsyncStream<DaemonEvent>.Continuation] = [:]

    /// Records an event and hands it to every watcher.
    func publish(_ kind: DaemonEvent.Kind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil, id: String? = nil, message: String? = nil) {
        let event = DaemonEvent(seq: nextSequence, kind: kind, time: Date(), peerUUID: peerUUID, peer: peer, versionID: versionID, id: id, message: message)
        nextSequence += 1
        recent.append(event)
        if recent.count > Self.retained { recent.removeFirst(recent.count - Self.retained) }
        for watcher in watchers.values { watcher.yield(event) }
    }

    /// The retained events after `since`, then every new one as it happens.
    func watch(since: UInt64) -> AsyncStream<DaemonEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .bufferingNewest(Self.retained))
        for event in recent where event.seq > since { continuation.yield(event) }
        let id = UUID()
        watchers[id] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(id) } }
        return stream
    }

    private func stopWatching(_ id: UUID) {
        watchers[id] = nil
    }

}
