import Dispatch
import Synchronization

/// Runs `operation` on the global concurrent executor and blocks the calling thread, hexctl's
/// main thread, until it is done.
///
/// hexctl's top level stays synchronous for it: with a top-level `await`, the main thread would
/// hand itself to `dispatchMain()`, which ends it with `pthread_exit`, and glibc then loads
/// libgcc_s to unwind it. That, with the dispatch threads it starts, cost a command about as much
/// as everything else it does (`hexbench delivery`: `hexctl status` against `/bin/true`).
func runBlocking<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
    let outcome = Outcome<Value>()
    let finished = DispatchSemaphore(value: 0)
    // Detached: a task made here would otherwise belong to the main actor, whose queue only a
    // main thread that is not blocked can run.
    Task.detached {
        do {
            outcome.set(.success(try await operation()))
        } catch {
            outcome.set(.failure(error))
        }
        finished.signal()
    }
    finished.wait()
    return try outcome.get()
}

/// The result of an operation, handed from the task that ran it to the thread that waits.
private final class Outcome<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>>(.failure(CancellationError()))

    func set(_ value: Result<Value, any Error>) {
        result.withLock { $0 = value }
    }

    func get() throws -> Value {
        try result.withLock { $0 }.get()
    }
}
