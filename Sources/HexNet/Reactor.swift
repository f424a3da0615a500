import CLinux
import Glibc
import Synchronization

/// Suspends tasks until their descriptors are readable or writable: one epoll set watched by one
/// thread of its own, with every wait's deadline in a heap.
///
/// It replaces libdispatch's read and write sources, whose event manager crashes on Linux when
/// sources are created and cancelled at the rate a daemon under attack opens and closes
/// connections (swift-corelibs-libdispatch issue 949: a use-after-free in its epoll bookkeeping).
/// Here a wait is a registration in a table and a deadline in a heap; nothing is allocated in
/// the kernel per wait, and a closed descriptor simply leaves the epoll set.
final class Reactor: Sendable {
    /// The reactor every socket of the process waits on, started on first use.
    static let shared = Reactor()

    private let epoll: Int32
    /// Written to wake the thread when a wait with an earlier deadline arrives.
    private let wakeup: Int32
    private let state = Mutex(State())

    private struct Registration {
        var reader: Wait?
        var writer: Wait?
        /// The descriptor is in the epoll set (it may have left it by being closed).
        var added = false
    }

    private struct State {
        var registrations: [Int32: Registration] = [:]
        var deadlines = DeadlineHeap()
        /// When the thread's current epoll_wait ends at the latest.
        var wakesAt: ContinuousClock.Instant?
        /// Why the reactor could not start (no epoll set, no thread), if it could not: every
        /// wait then fails at once with it, rather than waiting for ever.
        var startFailure: SocketError?
    }

    private static let wakeupToken = UInt64.max

    private init() {
        epoll = hexd_epoll_create()
        wakeup = hexd_eventfd()
        guard epoll >= 0, wakeup >= 0, hexd_epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, HEXD_EPOLLIN, Self.wakeupToken) == 0
        else {
            let failure = SocketError("set up the epoll reactor")
            state.withLock { $0.startFailure = failure }
            return
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Reactor>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<Reactor>.fromOpaque(context).release()
            state.withLock { $0.startFailure = SocketError("start the epoll reactor's thread", code: started) }
            return
        }
        pthread_detach(thread)
    }

    /// Suspends until `descriptor` is ready, `deadline` passes, or the task is cancelled.
    /// - Throws: `SocketError.timedOut` at the deadline, `CancellationError`, or the `SocketError`
    ///   of a descriptor epoll cannot watch.
    func wait(_ readiness: Readiness, descriptor: Int32, deadline: ContinuousClock.Instant?, operation: String)
        async throws
    {
        if let failure = state.withLock(\.startFailure) { throw failure }
        let wait = Wait(readiness: readiness, descriptor: descriptor, deadline: deadline, operation: operation)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard wait.attach(continuation) else { return }
                register(wait)
            }
        } onCancel: {
            wait.finish(.failure(CancellationError()))
            forget(wait)
        }
    }

    /// Whether a task waits for `descriptor` to be readable now: a test knows its read is parked
    /// (not about to start) before it acts on it.
    func hasReader(for descriptor: Int32) -> Bool {
        state.withLock { $0.registrations[descriptor]?.reader != nil }
    }

    // MARK: Registering

    private func register(_ wait: Wait) {
        let (armed, wake) = state.withLock { state -> (Int32, Bool) in
            var registration = state.registrations[wait.descriptor] ?? Registration()
            // A wait left from a closed descriptor whose number is reused has finished already.
            switch wait.readiness {
            case .readable: registration.reader = wait
            case .writable: registration.writer = wait
            }
            let result = arm(&registration, descriptor: wait.descriptor)
            state.registrations[wait.descriptor] = registration
            guard result == 0, let deadline = wait.deadline else { return (result, false) }
            state.deadlines.insert(deadline, wait)
            let wake = state.wakesAt.map { deadline < $0 } ?? true
            if wake { state.wakesAt = deadline }
            return (0, wake)
        }
        if armed != 0 {
            forget(wait)
            wait.finish(.failure(SocketError("wait for \(wait.operation)", code: armed)))
        } else if wake {
            var one: UInt64 = 1
            _ = write(wakeup, &one, MemoryLayout<UInt64>.size)
        }
    }

    /// Arms the descriptor for what its waits need, once (EPOLLONESHOT: a ready descriptor is
    /// reported once, then armed again for the waits left). Returns 0 or an errno value.
    private func arm(_ registration: inout Registration, descriptor: Int32) -> Int32 {
        var events: UInt32 = 0
        if registration.reader.map({ !$0.isFinished }) == true { events |= HEXD_EPOLLIN | HEXD_EPOLLRDHUP }
        if registration.writer.map({ !$0.isFinished }) == true { events |= HEXD_EPOLLOUT }
        guard events != 0 else { return 0 }
        events |= HEXD_EPOLLONESHOT
        let token = UInt64(UInt32(bitPattern: descriptor))
        var result = hexd_epoll_ctl(
            epoll, registration.added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, descriptor, events, token)
        if result != 0 && (errno == ENOENT || errno == EEXIST) {
            // The kernel dropped the descriptor when it was closed (its number is reused now), or
            // holds it from before: the other operation is the right one.
            result = hexd_epoll_ctl(
                epoll, registration.added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, events, token)
        }
        guard result == 0 else { return errno }
        registration.added = true
        return 0
    }

    /// Removes a wait that ended early (cancelled, past its deadline, or failed to arm), and arms
    /// its descriptor for the waits left, or for nothing: a datagram that arrives later, for no
    /// one, must not wake the thread.
    private func forget(_ wait: Wait) {
        state.withLock { state in
            if wait.deadline != nil { state.deadlines.noteEnded() }
            guard var registration = state.registrations[wait.descriptor] else { return }
            if registration.reader === wait { registration.reader = nil }
            if registration.writer === wait { registration.writer = nil }
            if registration.added && registration.reader == nil && registration.writer == nil {
                let token = UInt64(UInt32(bitPattern: wait.descriptor))
                _ = hexd_epoll_ctl(epoll, EPOLL_CTL_MOD, wait.descriptor, 0, token)
            } else if registration.added {
                _ = arm(&registration, descriptor: wait.descriptor)
            }
            state.registrations[wait.descriptor] =
                registration.reader == nil && registration.writer == nil && !registration.added ? nil : registration
        }
    }

    // MARK: The thread

    private func run() {
        var events = [hexd_event](repeating: hexd_event(), count: 256)
        while true {
            let timeout = state.withLock { state -> Int32 in
                guard let next = state.deadlines.earliest else {
                    state.wakesAt = nil
                    return -1
                }
                state.wakesAt = next
                let (seconds, attoseconds) = (next - ContinuousClock.now).components
                let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
                return Int32(max(0, min(milliseconds.rounded(.up), 60_000)))
            }
            let count = hexd_epoll_wait(epoll, &events, Int32(events.count), timeout)
            var ready: [Wait] = []
            if count > 0 {
                state.withLock { state in
                    for event in events.prefix(Int(count)) where event.token != Self.wakeupToken {
                        ready += take(event, from: &state)
                    }
                }
                if events.prefix(Int(count)).contains(where: { $0.token == Self.wakeupToken }) {
                    var value: UInt64 = 0
                    _ = read(wakeup, &value, MemoryLayout<UInt64>.size)
                }
            }
            let expired = state.withLock { state in state.deadlines.popDue(at: ContinuousClock.now) }
            for wait in ready { wait.finish(.success(())) }
            for wait in expired {
                forget(wait)
                wait.finish(.failure(SocketError.timedOut(wait.operation)))
            }
        }
    }

    /// The waits an event makes ready; the descriptor is armed again for the others.
    private func take(_ event: hexd_event, from state: inout State) -> [Wait] {
        let descriptor = Int32(bitPattern: UInt32(truncatingIfNeeded: event.token))
        guard var registration = state.registrations[descriptor] else { return [] }
        var ready: [Wait] = []
        let failed = event.events & (HEXD_EPOLLERR | HEXD_EPOLLHUP) != 0
        if let reader = registration.reader, failed || event.events & (HEXD_EPOLLIN | HEXD_EPOLLRDHUP) != 0 {
            ready.append(reader)
            registration.reader = nil
        }
        if let writer = registration.writer, failed || event.events & HEXD_EPOLLOUT != 0 {
            ready.append(writer)
            registration.writer = nil
        }
        for wait in ready where wait.deadline != nil { state.deadlines.noteEnded() }
        _ = arm(&registration, descriptor: descriptor)
        state.registrations[descriptor] = registration
        return ready
    }
}

/// What to wait for on a file descriptor.
enum Readiness {
    case readable
    case writable
}

/// One task waiting: resumed exactly once, by readiness, its deadline or its cancellation.
final class Wait: Sendable {
    let readiness: Readiness
    let descriptor: Int32
    let deadline: ContinuousClock.Instant?
    let operation: String

    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var finished = false
    }

    private let state = Mutex(State())

    init(readiness: Readiness, descriptor: Int32, deadline: ContinuousClock.Instant?, operation: String) {
        self.readiness = readiness
        self.descriptor = descriptor
        self.deadline = deadline
        self.operation = operation
    }

    var isFinished: Bool { state.withLock(\.finished) }

    /// Keeps the continuation; false (and it is resumed at once) when the wait already ended.
    func attach(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        let ended = state.withLock { state in
            guard !state.finished else { return true }
            state.continuation = continuation
            return false
        }
        if ended { continuation.resume(throwing: CancellationError()) }
        return !ended
    }

    /// Ends the wait with `result`, unless it has ended already.
    func finish(_ result: Result<Void, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}

/// The deadlines of the waits, earliest first: a binary heap. A wait that ended otherwise (ready,
/// cancelled) stays until its deadline comes up and is then skipped, or until the heap is
/// compacted: once the waits said to have ended since the last compaction are half the heap (and
/// at least `endedBeforeCompaction`), the ended ones are dropped, into a new array of their size.
/// So the heap holds at most about twice the waits in progress, plus a few, however many come and
/// go: a burst of connections leaves no waits (nor an array sized for it) behind for the minutes
/// their deadlines were set for, each pinning a page of freed memory. The thread sleeps until the
/// earliest deadline, ended or not: a task that waits again for the same deadline (discovery's
/// loop, after each datagram, until its next beacon) then needs no wake-up to say so.
struct DeadlineHeap {
    private var entries: [(deadline: ContinuousClock.Instant, wait: Wait)] = []
    /// Waits said to have ended since the last compaction; some may not have been in the heap, or
    /// may have left it at their deadline: that only brings a compaction forward.
    private var ended = 0
    static let endedBeforeCompaction = 64

    var count: Int { entries.count }

    var earliest: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func insert(_ deadline: ContinuousClock.Instant, _ wait: Wait) {
        entries.append((deadline, wait))
        siftUp(entries.count - 1)
    }

    /// Says that a wait with a deadline ended otherwise than by it. Compacting costs the heap's
    /// size, and comes after at least half as many of these: O(log n) each, amortized.
    mutating func noteEnded() {
        ended += 1
        if ended >= max(Self.endedBeforeCompaction, entries.count / 2) { compact() }
    }

    /// Drops the waits that ended and rebuilds the heap, in an array of its new size.
    private mutating func compact() {
        entries = entries.filter { !$0.wait.isFinished }
        entries.sort { $0.deadline < $1.deadline }  // a sorted array is a heap
        ended = 0
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the waits whose deadline is at or before `now` and that have not ended.
    mutating func popDue(at now: ContinuousClock.Instant) -> [Wait] {
        var due: [Wait] = []
        while let first = entries.first, first.deadline <= now {
            removeFirst()
            if !first.wait.isFinished { due.append(first.wait) }
        }
        return due
    }

    private mutating func removeFirst() {
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        var parent = 0
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
