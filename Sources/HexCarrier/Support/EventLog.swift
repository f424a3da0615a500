import HexKit

/// The daemon's events, numbered from 1, with the most recent ones kept for watchers that
/// resume (`since`), and live delivery to every watcher.
package actor EventLog {
    /// How many past events a resuming watcher can still get.
    package static let retained = 1_000

    /// A happening as recorded: its number and time.
    package struct Recorded: Sendable, Equatable {
        /// Increases by one per event for the daemon's lifetime.
        package let seq: UInt64
        package let time: Date
        package let happening: Happening
    }

    package init() {}

    private var nextSequence: UInt64 = 1
    /// The retained events, and up to as many older ones again: they are dropped in bulk, so
    /// that recording an event never shifts the whole list.
    private var recent: [Recorded] = []
    private var watchers: [UUID: Watcher] = [:]

    private struct Watcher {
        let continuation: AsyncStream<Recorded>.Continuation
        /// The kinds it is given; nil for all.
        let kinds: Set<EventKind>?

        func offer(_ event: Recorded) {
            if kinds?.contains(event.happening.kind) ?? true { continuation.yield(event) }
        }
    }

    /// Records an event and hands it to every watcher.
    package func publish(
        _ kind: EventKind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil,
        id: String? = nil, message: String? = nil
    ) {
        publish([Happening(kind, peerUUID: peerUUID, peer: peer, versionID: versionID, id: id, message: message)])
    }

    /// Records events in this order and hands each to every watcher.
    package func publish(_ happenings: [Happening]) {
        let time = Date()
        for happening in happenings {
            let event = Recorded(seq: nextSequence, time: time, happening: happening)
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
    package func watch(since: UInt64, kinds: Set<EventKind>? = nil) -> AsyncStream<Recorded> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Recorded.self, bufferingPolicy: .bufferingNewest(Self.retained))
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
