/// Suspends until `descriptor` is readable or writable, without blocking a thread (see `Reactor`).
///
/// - Throws: `CancellationError` when the task is cancelled, `SocketError.timedOut` after `timeout`.
func waitUntil(_ readiness: Readiness, descriptor: Int32, timeout: Duration?, operation: @autoclosure () -> String)
    async throws
{
    try await Reactor.shared.wait(
        readiness, descriptor: descriptor, deadline: timeout.map { .now + $0 }, operation: operation())
}
