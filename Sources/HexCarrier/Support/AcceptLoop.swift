import Glibc
import HexNet

/// Accepts connections until cancelled, each served in its own child task once `admit` lets it in
/// (asked in the loop, so a connection refused costs no task).
///
/// Each connection holds one of `slots` from before its accept until its task ends (or `serve`
/// gives its slot back sooner); with none free, the loop accepts nothing (the kernel's backlog
/// holds the newcomers) until one is given back. A table that closes its stalest connection to make
/// room for a newcomer (`ConnectionTable`) only wakes it, and its descriptor is given back when its
/// task ends: accepting on regardless would hold a descriptor for every connection a flood makes,
/// whatever the table's cap.
///
/// Out of descriptors (or kernel memory, or within `DescriptorHeadroom` of the limit), it backs
/// off and tries again, logging once per episode (and episodes at the rate-limited pace): a daemon
/// at its descriptor limit keeps serving the connections it has and recovers when they end,
/// instead of spinning or dying.
package func acceptConnections(
    on listener: StreamListener, slots: ConnectionSlots, logger: Logger, admit: (Socket) -> Bool = { _ in true },
    serve: @escaping @Sendable (Socket, HeldSlot) async -> Void
)
    async
{
    await withDiscardingTaskGroup { group in
        var exhausted = false
        while await slots.take() {
            let slot = HeldSlot(of: slots)
            do {
                let socket = try await listener.accept()
                if exhausted {
                    logger.limited("descriptor limit", .warning, "accepting connections again")
                    exhausted = false
                }
                guard admit(socket) else {
                    slot.give()
                    continue
                }
                group.addTask {
                    await serve(socket, slot)
                    slot.give()
                }
            } catch is CancellationError {
                slot.give()
                return
            } catch let error as SocketError where [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.code) {
                slot.give()
                if !exhausted {
                    logger.limited("descriptor limit", .error, "\(error); backing off until connections close")
                    exhausted = true
                }
                guard (try? await Task.sleep(for: .milliseconds(100))) != nil else { return }
            } catch {
                slot.give()
                logger.error("\(error)")
                return
            }
        }
    }
}
