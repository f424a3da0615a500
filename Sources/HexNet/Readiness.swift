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

/// One wait: whichever comes first of readiness, timeout and cancellation resumes the task, once.
private final class OneShotWait: Sendable {
    /// A dispatch source. Dispatch sources are thread-safe; the protocol only lacks the
    /// Sendable conformance on Linux.
    private struct Source: @unchecked Sendable {
        let source: any DispatchSourceProtocol
    }

    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var sources: [Source] = []
        /// Set when the wait ended before it started (cancelled first).
        var finished = false
    }

    private let state = Mutex(State())

    func start(
        _ readiness: Readiness, descriptor: Int32, timeout: Duration?, operation: String,
        continuation: CheckedContinuation<Void, any Error>
    ) {
        let source: any DispatchSourceProtocol = switch readiness {
        case .readable: DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        case .writable: DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: .global())
        }
        source.setEventHandler { [self] in finish(throwing: nil) }
        var timer: (any DispatchSourceProtocol)?
        if let timeout {
            let timerSource = DispatchSource.makeTimerSource(queue: .global())
            let (seconds, attoseconds) = timeout.components
            timerSource.schedule(deadline: .now() + .nanoseconds(Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
            timerSource.setEventHandler { [self] in finish(throwing: SocketError.timedOut(operation)) }
            timer = timerSource
        }
        let sources = [source, timer].compactMap { $0.map(Source.init) }
        let alreadyFinished = state.withLock { state in
            if state.finished { return true }
            state.continuation = continuation
            state.sources = sources
            return false
        }
        if alreadyFinished {
            continuation.resume(throwing: CancellationError())
            return
        }
        for source in sources { source.source.resume() }
    }

    /// Ends the wait: resumes the task (with `error`, or normally when nil) unless it was resumed
    /// already, and cancels the sources.
    func finish(throwing error: (any Error)?) {
        let (continuation, sources) = state.withLock { state in
            defer { state = State(continuation: nil, sources: [], finished: true) }
            return (state.continuation, state.sources)
        }
        for source in sources { source.source.cancel() }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}
