import CLinux
import Dispatch
import Glibc
import Synchronization

/// A few threads of the process's own for the calls that block a thread however they are made
/// (`posix_spawn`, `getaddrinfo`): never Swift's cooperative pool, where a blocked thread is one
/// fewer for every task, nor the reactor's thread. Calls wait their turn in order, and at most
/// `capacity` may wait.
public final class BlockingPool: Sendable {
    /// The pool every blocking call of the process goes to.
    public static let shared = BlockingPool(threads: 4, capacity: 256)

    /// The jobs waiting, shared with the threads.
    private final class Queue: Sendable {
        let jobs = Mutex<[@Sendable () -> Void]>([])
        /// Counts the jobs waiting, so an idle thread sleeps instead of spinning.
        let waiting = DispatchSemaphore(value: 0)

        /// One thread's loop: take the oldest job, run it, sleep while there is none.
        func serve() -> Never {
            while true {
                waiting.wait()
                guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                job()
            }
        }
    }

    private let queue = Queue()
    private let capacity: Int
    /// How many threads started (none means every call fails at once, rather than waiting forever).
    private let started: Int

    init(threads: Int, capacity: Int) {
        self.capacity = capacity
        var started = 0
        for _ in 0..<threads {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(queue).toOpaque()
            let result = pthread_create(
                &thread, nil,
                { context in
                    guard let context else { return nil }
                    Unmanaged<Queue>.fromOpaque(context).takeRetainedValue().serve()
                }, context)
            if result == 0 {
                pthread_detach(thread)
                started += 1
            } else {
                Unmanaged<Queue>.fromOpaque(context).release()
            }
        }
        self.started = started
    }

    /// Runs `body` on one of the pool's threads and returns what it returns. It runs to its end
    /// even if the calling task is cancelled meanwhile.
    /// - Throws: what `body` throws, or `SocketError` when the pool has no thread or is full.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard started > 0 else { throw SocketError("run a blocking call", reason: "no thread could be started for it") }
        return try await withCheckedThrowingContinuation { continuation in
            let queued = queue.jobs.withLock { jobs -> Bool in
                guard jobs.count < capacity else { return false }
                jobs.append { continuation.resume(with: Result { try body() }) }
                return true
            }
            if queued {
                queue.waiting.signal()
            } else {
                continuation.resume(
                    throwing: SocketError("run a blocking call", reason: "\(capacity) calls are waiting already"))
            }
        }
    }

    /// Runs `body` on a thread of its own at the lowest priority (nice 19), and returns what it
    /// returns: CPU work that may take a second (making an RSA key) and must not slow what the
    /// daemon serves meanwhile, which then runs first. It runs to its end even if the calling task
    /// is cancelled meanwhile.
    /// - Throws: what `body` throws, or `SocketError` when no thread can be started for it.
    public static func runAside<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job: @Sendable () -> Void = {
                // Where the priority cannot be lowered, the work runs all the same.
                _ = hexd_lower_thread_priority()
                continuation.resume(with: Result { try body() })
            }
            let context = Unmanaged.passRetained(Job(job)).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(
                &thread, nil,
                { context in
                    guard let context else { return nil }
                    Unmanaged<Job>.fromOpaque(context).takeRetainedValue().run()
                    return nil
                }, context)
            if result == 0 {
                pthread_detach(thread)
            } else {
                Unmanaged<Job>.fromOpaque(context).release()
                continuation.resume(
                    throwing: SocketError("run work aside", reason: "no thread could be started (\(result))"))
            }
        }
    }

    /// A job handed to a thread of its own.
    private final class Job: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
