import Dispatch

/// A serial executor on a private DispatchQueue, for actors whose methods block (SQLite): their
/// work runs on that queue's thread, never on the cooperative pool (two threads on a 2-core
/// machine, which one blocked call would halve).
final class DispatchQueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless it runs on this executor's queue. The runtime asks it where it cannot tell by
    /// itself (`assumeIsolated`, a `preconditionIsolated` in a callback the queue runs), so that
    /// code on the store's thread is known isolated to the store, and code elsewhere is caught.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
