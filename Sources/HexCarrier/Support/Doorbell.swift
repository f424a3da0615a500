import Synchronization

/// Wakes a task that waits for something to change: a ring with no one waiting is kept (one, however
/// many rings), and a waiter that is cancelled leaves the doorbell as it was for the next one.
///
/// An `AsyncStream` will not do: cancelling the task that iterates it ends the stream for good, so
/// a loop that cancels its waiter each round would find it finished and spin.
package final class Doorbell: Sendable {
    private struct State {
        var isRung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    package init() {}

    /// Wakes the waiter, or the next one to wait.
    package func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.isRung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once rung (at once if it was rung meanwhile), or when the task is cancelled. One
    /// waiter at a time.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isRung {
                        state.isRung = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// Returns once rung, once `deadline` has passed (never, when it is nil), or when the task is
    /// cancelled: the wait of a loop that acts on a machine's deadline, started over whenever the
    /// machine changes.
    package func wait(until deadline: ContinuousClock.Instant?, tolerance: Duration? = nil) async {
        guard let deadline else { return await wait() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(until: deadline, tolerance: tolerance) }
            await group.next()
            group.cancelAll()
        }
    }
}
