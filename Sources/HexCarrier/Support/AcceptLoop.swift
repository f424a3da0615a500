import Glibc
import HexNet

/// Accepts connections until cancelled, each served in its own child task once `admit` lets it in
/// (asked in the loop, so a connection refused costs no task).
///
/// Out of descriptors (or kernel memory), it backs off and tries again, logging once per episode
/// (and episodes at the rate-limited pace): a daemon at its descriptor limit keeps serving the
/// connections it has and recovers when they end, instead of spinning or dying.
package func acceptConnections(
    on listener: StreamListener, logger: Logger, admit: (Socket) -> Bool = { _ in true },
    serve: @escaping @Sendable (Socket) async -> Void
)
    async
{
    await withDiscardingTaskGroup { group in
        var exhausted = false
        while !Task.isCancelled {
            do {
                let socket = try await listener.accept()
                if exhausted {
                    logger.limited("descriptor limit", .warning, "accepting connections again")
                    exhausted = false
                }
                if admit(socket) { group.addTask { await serve(socket) } }
            } catch is CancellationError {
                return
            } catch let error as SocketError where [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.code) {
                if !exhausted {
                    logger.limited("descriptor limit", .error, "\(error); backing off until connections close")
                    exhausted = true
                }
                guard (try? await Task.sleep(for: .milliseconds(100))) != nil else { return }
            } catch {
                logger.error("\(error)")
                return
            }
        }
    }
}
