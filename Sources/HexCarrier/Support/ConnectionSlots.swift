import Synchronization

/// How many connections a server's accept loops may hold at once, from accept to the end of their
/// work: shared by the loops of its listeners (IPv4 and IPv6), so that together they hold at most
/// `maximum` descriptors for connections. A loop takes a slot before it accepts, waiting its turn
/// while none is free; a slot given back goes to the loop that waited longest.
package final class ConnectionSlots: Sendable {
    private struct State {
        var taken = 0
        var waiters: [(id: UInt64, waiter: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private let maximum: Int
    private let state = Mutex(State())

    /// - Parameter maximum: at least 1.
    package init(maximum: Int) {
        self.maximum = max(maximum, 1)
    }

    /// For a server whose `ConnectionTable` closes its stalest connection to make room: its cap,
    /// and a few more for its loops' accepts and the connections being closed for newcomers, so that
    /// the table fills and the loops accept on while those end.
    package convenience init(for table: ConnectionTable) {
        self.init(maximum: table.total + Self.beyondCap)
    }

    /// Slots past a table's cap: for the accepts under way, and the connections being closed.
    package static let beyondCap = 8

    /// Takes a slot, waiting for one to be given back while none is free.
    /// - Returns: false, having taken none, when the task was cancelled.
    package func take() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.taken >= maximum else {
                        state.taken += 1
                        return true
                    }
                    state.waiters.append((id, waiter))
                    return nil
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).waiter
            }
            cancelled?.resume(returning: false)
        }
    }

    /// Gives a slot back: to the loop that waited longest, if one waits.
    package func give() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiters.isEmpty else {
                state.taken = max(state.taken - 1, 0)
                return nil
            }
            return state.waiters.removeFirst().waiter
        }
        next?.resume(returning: true)
    }
}

/// A connection's slot, given back once: by its task when it no longer needs it (a KDE Connect
/// link once proved, which its carrier's own tables bound from then on), else by the accept loop
/// when its task ends.
package final class HeldSlot: Sendable {
    private let slots: ConnectionSlots
    private let held = Mutex(true)

    init(of slots: ConnectionSlots) {
        self.slots = slots
    }

    /// Gives the slot back, if it was not already.
    package func give() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        if wasHeld { slots.give() }
    }
}
