import HexCarrier
import Synchronization

/// The packets waiting to be written on one KDE Connect link. A TLS connection serves one task at
/// a time, and the task reading the link owns it: others queue their packets here and ring, the
/// reader stops waiting for the device, writes them, and tells each sender whether its packets
/// went.
final class KDEConnectOutgoing: Sendable {
    /// Packets queued at once on a link, at most (a send is a few).
    static let capacity = 64

    /// Packets taken for writing, and how to tell their sender whether they went.
    struct Batch: Sendable {
        let lines: [[UInt8]]
        fileprivate let written: CheckedContinuation<Bool, Never>

        /// Tells the sender whether the packets were written; called once.
        func done(_ wasWritten: Bool) { written.resume(returning: wasWritten) }
    }

    private struct State {
        var batches: [(number: Int, batch: Batch)] = []
        var queued = 0
        var next = 0
        /// Numbers whose deadline passed before they were queued (at most one per sender waiting).
        var withdrawn: Set<Int> = []
        var isClosed = false
    }

    private let state = Mutex(State())
    /// Rung when packets are queued, or the link is closed.
    let bell = Doorbell()

    /// Queues `lines` (packets, each without its line ending) and waits until the reader wrote
    /// them: true once they are written on the link (in the device's TLS connection, which is all
    /// KDE Connect confirms); false when the link ended first, the queue is full, or the reader did
    /// not take them within `timeout` (a device that stopped reading holds its link's writes).
    func write(_ lines: [[UInt8]], timeout: Duration) async -> Bool {
        let number = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.withdraw(number)
        }
        defer {
            timer.cancel()
            state.withLock { _ = $0.withdrawn.remove(number) }
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let taken = state.withLock { state -> Bool in
                guard !state.isClosed, !state.withdrawn.contains(number), state.queued + lines.count <= Self.capacity
                else { return false }
                state.batches.append((number, Batch(lines: lines, written: continuation)))
                state.queued += lines.count
                return true
            }
            if taken { bell.ring() } else { continuation.resume(returning: false) }
        }
    }

    /// Takes a batch back that the reader has not taken yet: its sender hears false. One not
    /// queued yet never will be.
    private func withdraw(_ number: Int) {
        let withdrawn = state.withLock { state -> Batch? in
            guard let index = state.batches.firstIndex(where: { $0.number == number }) else {
                state.withdrawn.insert(number)
                return nil
            }
            let (_, batch) = state.batches.remove(at: index)
            state.queued -= batch.lines.count
            return batch
        }
        withdrawn?.done(false)
    }

    /// The batches queued, taken for writing: the reader writes each, then calls its `done`
    /// (false for each it does not write).
    func take() -> [Batch] {
        state.withLock { state -> [Batch] in
            defer {
                state.batches = []
                state.queued = 0
            }
            return state.batches.map(\.batch)
        }
    }

    /// The link ended: what waits is not written, and nothing more is taken.
    func close() {
        let left = state.withLock { state -> [Batch] in
            state.isClosed = true
            defer {
                state.batches = []
                state.queued = 0
            }
            return state.batches.map(\.batch)
        }
        for batch in left { batch.done(false) }
        bell.ring()
    }
}
