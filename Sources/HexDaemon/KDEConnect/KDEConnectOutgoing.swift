import Synchronization

/// The packets waiting to be written on one KDE Connect link. A TLS connection serves one task at
/// a time, and the task reading the link owns it: others queue their packets here and ring, the
/// reader stops waiting for the device, writes them, and tells each sender whether its packets
/// went.
final class KDEConnectOutgoing: Sendable {
    /// Packets queued at once on a link, at most (a send is a few).
    static let capacity = 64

    private struct Batch {
        let lines: [[UInt8]]
        let written: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var batches: [Batch] = []
        var queued = 0
        var isClosed = false
    }

    private let state = Mutex(State())
    /// Rung when packets are queued, or the link is closed.
    let bell = Doorbell()

    /// Queues `lines` (packets, each without its line ending) and waits until the reader wrote
    /// them: true once they are written on the link (in the device's TLS connection, which is all
    /// KDE Connect confirms), false when the link ended first or the queue is full.
    func write(_ lines: [[UInt8]]) async -> Bool {
        let queued = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let taken = state.withLock { state -> Bool in
                guard !state.isClosed, state.queued + lines.count <= Self.capacity else { return false }
                state.batches.append(Batch(lines: lines, written: continuation))
                state.queued += lines.count
                return true
            }
            if taken { bell.ring() } else { continuation.resume(returning: false) }
        }
        return queued
    }

    /// The batches queued, taken for writing: the reader writes each, then calls its `done`.
    func take() -> [(lines: [[UInt8]], done: @Sendable (Bool) -> Void)] {
        let batches = state.withLock { state -> [Batch] in
            defer {
                state.batches = []
                state.queued = 0
            }
            return state.batches
        }
        return batches.map { batch in (batch.lines, { batch.written.resume(returning: $0) }) }
    }

    /// The link ended: what waits is not written, and nothing more is taken.
    func close() {
        let left = state.withLock { state -> [Batch] in
            state.isClosed = true
            defer {
                state.batches = []
                state.queued = 0
            }
            return state.batches
        }
        for batch in left { batch.written.resume(returning: false) }
        bell.ring()
    }
}
