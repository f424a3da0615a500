import Dispatch
import Synchronization

/// What to wait for on a file descriptor.
enum Readiness {
    case readable
    case writable
}

/// Suspends until `descriptor` is readable or writable, without blocking a thread: a one-shot
/// DispatchSource (epoll underneath) resumes the task.
///
/// - Throws: `CancellationError` when the task is cancelled, `SocketError.timedOut` after `timeout`.
func waitUntil(_ readiness: Readiness, descriptor: Int32, timeout: Duration?, operation: @autoclosure () -> String) async throws {
    let wait = OneShotWait()
    let description = operation()
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            wait.start(readiness, descriptor: descriptor, timeout: timeout, operation: description, continuation: continuation)
        }
    } onCancel: {
        wait.finish(throwing: CancellationError())
    }
}

/// One wait: whichever comes first of readiness, timeout and cancellation ends it, once.
///
/// The task is resumed only from the descriptor source's cancel handler: libdispatch requires
/// that a descriptor is not closed (and its number reused by a new socket) until then, or the
/// new socket's events can be lost.
private final class OneShotWait: Sendable {
    /// A dispatch source. Dispatch sources are thread-safe; the protocol only lacks the
    /// Sendable conformance on Linux.
    private struct Source: @unchecked Sendable {
        let source: any DispatchSourceProtocol
    }

    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var sources: [Source] = []
        /// How the wait ended, once it has.
        var outcome: Result<Void, any Error>?
    }

    private let state = Mutex(State())

    func start(
        _ readiness: Readiness, descriptor: Int32, timeout: Duration?, operation: String,
        continuation: CheckedContinuation<Void, any Error>
    ) {
        let endedEarly = state.withLock { state in
            guard state.outcome == nil else { return true }
            state.continuation = continuation
            return false
        }
        if endedEarly {
            continuation.resume(throwing: CancellationError())
            return
        }
        let watch: any DispatchSourceProtocol = switch readiness {
        case .readable: DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        case .writable: DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: .global())
        }
        watch.setEventHandler { [self] in finish(throwing: nil) }
        watch.setCancelHandler { [self] in resume() }
        var sources = [Source(source: watch)]
        if let timeout {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            // At most about 31 years: no product of seconds can overflow.
            let seconds = min(Double(timeout.components.seconds), 1e9) + Double(timeout.components.attoseconds) / 1e18
            timer.schedule(deadline: .now() + .nanoseconds(Int(seconds * 1e9)))
            timer.setEventHandler { [self] in finish(throwing: SocketError.timedOut(operation)) }
            sources.append(Source(source: timer))
        }
        let endedMeanwhile = state.withLock { state in
            state.sources = sources
            return state.outcome != nil
        }
        // A source must be resumed before it is cancelled or released.
        for source in sources { source.source.resume() }
        if endedMeanwhile {
            for source in sources { source.source.cancel() }
        }
    }

    /// Ends the wait (normally when `error` is nil) unless it has ended already. The task
    /// resumes once the descriptor's source has finished cancelling.
    func finish(throwing error: (any Error)?) {
        let sources = state.withLock { state -> [Source] in
            guard state.outcome == nil else { return [] }
            state.outcome = error.map { .failure($0) } ?? .success(())
            return state.sources
        }
        for source in sources { source.source.cancel() }
    }

    private func resume() {
        let (continuation, outcome) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.outcome)
        }
        continuation?.resume(with: outcome ?? .failure(CancellationError()))
    }
}
