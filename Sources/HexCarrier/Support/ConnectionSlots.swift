import Synchronization

/// How many connections a server's accept loops may hold at once, from accept to the end of their
/// tasks: shared by the loops of its listeners (IPv4 and IPv6), so that together they hold at most
/// `maximum` descriptors for connections (and one more per loop, each accepting at once).
package final class ConnectionSlots: Sendable {
    private struct State {
        var taken = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    package let maximum: Int
    private let state = Mutex(State())

    /// - Parameter maximum: at least 1.
    package init(maximum: Int) {
        self.maximum = max(maximum, 1)
    }

    /// For a server whose `ConnectionTable` closes its stalest connection to make room: its cap,
    /// and a few more for newcomers while the ones closed for them end, so that the loop accepts on
    /// as they do.
    package convenience init(for table: ConnectionTable) {
        self.init(maximum: table.total + Self.closingAtOnce)
    }

    /// Connections past a table's cap, being closed for newcomers, that its loop does not wait for.
    package static let closingAtOnce = 8

    /// Returns once a slot is free (at once if one is), or the task is cancelled.
    package func free() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state -> Bool in
                    guard state.taken >= maximum, !Task.isCancelled else { return false }
                    state.waiters.append(waiter)
                    return true
                }
                if !waits { waiter.resume() }
            }
        } onCancel: {
            for waiter in state.withLock({ state in
                defer { state.waiters = [] }
                return state.waiters
            }) {
                waiter.resume()
            }
        }
    }

    /// Takes a slot, free or not: an accept loop takes one for the connection it just accepted.
    package func take() {
        state.withLock { $0.taken += 1 }
    }

    /// Gives a slot back, and wakes the loops waiting for one.
    package func give() {
        let waiters = state.withLock { state in
            state.taken = max(state.taken - 1, 0)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
