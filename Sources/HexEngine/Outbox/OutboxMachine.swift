import FoundationEssentials

/// What the outbox machine needs to know of a queued send.
public protocol OutboxItem: Sendable {
    /// The send's `messageID`: one attempt at a time per id.
    var messageID: String { get }
    /// Where it goes (an address the user typed, or a peer's UUID): one destination's sends are
    /// attempted in order.
    var destination: String { get }
}

/// The outbox's decisions, apart from its I/O: which sends are under way (one attempt at a time
/// per send, whoever asks), who waits for them, which due sends go in which order, when a send is
/// given up or tried again, and how long the delivery loop sleeps. Pure: the `Outbox` actor reads
/// and writes the table, talks to peers and keeps the continuations; it asks this what to do, and
/// every change of state here is one synchronous call, so no `await` can fall between a check
/// and the reservation it guards.
public struct OutboxMachine: Sendable {
    /// A caller waiting for the outcome of an attempt another caller started.
    public struct Waiter: Hashable, Sendable {
        let number: UInt64
    }

    /// The answer to a request for an attempt.
    public enum Request: Equatable, Sendable {
        /// The send is now reserved for this caller: read it and attempt it, then call `finished`.
        case attempt
        /// An attempt is under way: `finished` names this waiter when it ends.
        case wait(Waiter)
        /// The user is cancelling it: there is nothing to attempt.
        case withdrawn
    }

    /// Whether an attempt goes on the wire.
    public enum Decision: Equatable, Sendable {
        case send
        /// Given up without an attempt, for this reason.
        case giveUp(String)
    }

    /// When a failed attempt is tried again.
    public let schedule: RetrySchedule
    /// Sends under way, each with the callers waiting for its outcome.
    private var inFlight: [String: [Waiter]] = [:]
    private var waitersIssued: UInt64 = 0
    /// Whether the delivery loop is in a round, and the sends settled since it read its due ones:
    /// that read is stale for them (delivered, given up, or put off by another caller's attempt).
    /// At most every queued send, and emptied at each round.
    private var roundOpen = false
    private var settledThisRound: Set<String> = []
    /// Destinations whose lane goes on past its round (its attempts may wait minutes for a person):
    /// later rounds leave them out, so that none of their sends overtakes another or goes twice.
    private var lanesOutliving: Set<String> = []
    /// Sends the user cancelled whose removal from the table is under way, each with the cancels
    /// of it in progress: nobody reserves them, whatever they read before. At most one entry per
    /// cancel request in progress.
    private var withdrawing: [String: Int] = [:]

    public init(schedule: RetrySchedule = RetrySchedule()) {
        self.schedule = schedule
    }

    /// Sends under way now.
    public var attemptsUnderWay: Int { inFlight.count }

    // MARK: Reservations

    /// A caller wants `messageID` attempted now (`hexctl send --wait`, `outbox retry`): it is
    /// reserved for that caller, or, if under way already, the caller waits for that attempt.
    public mutating func request(_ messageID: String) -> Request {
        guard withdrawing[messageID] == nil else { return .withdrawn }
        guard inFlight[messageID] != nil else {
            inFlight[messageID] = []
            return .attempt
        }
        waitersIssued += 1
        let waiter = Waiter(number: waitersIssued)
        inFlight[messageID, default: []].append(waiter)
        return .wait(waiter)
    }

    /// Reserves `messageID` for the delivery loop; false if it is under way already (then the
    /// loop passes it over: the attempt under way settles it) or was settled since the round read it.
    public mutating func reserve(_ messageID: String) -> Bool {
        guard inFlight[messageID] == nil, !settledThisRound.contains(messageID), withdrawing[messageID] == nil
        else { return false }
        inFlight[messageID] = []
        return true
    }

    /// The attempt at `messageID` ended: it is no longer reserved, and these waiters get its outcome.
    public mutating func finished(_ messageID: String) -> [Waiter] {
        if roundOpen { settledThisRound.insert(messageID) }
        return inFlight.removeValue(forKey: messageID) ?? []
    }

    // MARK: Cancels

    /// The user cancels `messageID`, before its removal from the table: from now on no caller and
    /// no lane reserves it, even one holding a read from before. An attempt already under way is
    /// not stopped (its bytes may be on the wire).
    /// - Returns: whether an attempt is under way, which may still deliver it.
    public mutating func cancelStarts(_ messageID: String) -> Bool {
        withdrawing[messageID, default: 0] += 1
        return inFlight[messageID] != nil
    }

    /// Whether a cancel of `messageID` is in progress: an attempt reserved before it is not made.
    public func isWithdrawing(_ messageID: String) -> Bool {
        withdrawing[messageID] != nil
    }

    /// The cancel of `messageID` is over (the table no longer holds it, or it failed): a round
    /// that read it before still passes it over.
    public mutating func cancelEnds(_ messageID: String) {
        let left = (withdrawing[messageID] ?? 1) - 1
        withdrawing[messageID] = left > 0 ? left : nil
        if roundOpen { settledThisRound.insert(messageID) }
    }

    // MARK: Rounds

    /// The delivery loop is about to read the due sends.
    public mutating func roundStarts() {
        roundOpen = true
        settledThisRound = []
    }

    /// The delivery loop's round is over: what it read is forgotten.
    public mutating func roundEnds() {
        roundOpen = false
        settledThisRound = []
    }

    /// One destination's due sends, attempted in order, one at a time.
    public struct Lane<Item: OutboxItem>: Sendable {
        public let destination: String
        private var pending: ArraySlice<Item>

        init(destination: String, items: [Item]) {
            self.destination = destination
            pending = items[...]
        }

        /// The next send to attempt, reserved in `machine`; a send under way elsewhere is passed over.
        public mutating func next(reservingIn machine: inout OutboxMachine) -> Item? {
            while let item = pending.popFirst() {
                if machine.reserve(item.messageID) { return item }
            }
            return nil
        }

        /// The sends not yet attempted, in order.
        public var remaining: [Item] { Array(pending) }

        /// Ends the lane after an attempt that must wait: the sends not yet attempted wait as
        /// long, so that none overtakes the one before it.
        public mutating func postpone() -> [Item] {
            defer { pending = [] }
            return Array(pending)
        }
    }

    /// A round's due sends as lanes, one per destination, in the order their first send came;
    /// sends under way, or settled since the round started, and destinations whose lane outlives
    /// its round, are left out.
    public func lanes<Item: OutboxItem>(of due: [Item]) -> [Lane<Item>] {
        var byDestination: [String: [Item]] = [:]
        var order: [String] = []
        for item in due
        where inFlight[item.messageID] == nil && !settledThisRound.contains(item.messageID)
            && withdrawing[item.messageID] == nil && !lanesOutliving.contains(item.destination)
        {
            if byDestination[item.destination] == nil { order.append(item.destination) }
            byDestination[item.destination, default: []].append(item)
        }
        return order.map { Lane(destination: $0, items: byDestination[$0] ?? []) }
    }

    /// The lane of `destination` goes on apart from its round, which does not wait for it.
    public mutating func laneOutlivesRound(_ destination: String) {
        lanesOutliving.insert(destination)
    }

    /// The lane of `destination` that outlived its round ended: its sends go in later rounds again.
    public mutating func outlivingLaneEnded(_ destination: String) {
        lanesOutliving.remove(destination)
    }

    // MARK: Outcomes

    /// Whether a send still goes out at `now`, or has expired.
    public func decide(expiresAt: Date, attempts: Int, lastError: String?, now: Date) -> Decision {
        guard now >= expiresAt else { return .send }
        let last = lastError.map { " (last: \($0))" } ?? ""
        return .giveUp("expired: not delivered by \(expiresAt.formatted(.iso8601)) after \(attempts) attempts\(last)")
    }

    /// When a send whose attempt number `attempts` (1 or more) just failed is tried again: after
    /// the schedule's backoff with `jitter` (0.5 to 1), and never after it expires.
    public func nextAttempt(afterAttempts attempts: Int, jitter: Double, expiresAt: Date, now: Date) -> Date {
        min(now + schedule.delay(afterAttempts: attempts, jitter: jitter).inSeconds, expiresAt)
    }

    /// How long the delivery loop sleeps when the next send falls due at `next`: until then, at
    /// least a millisecond and at most `longest`; nil (no timer: only a wake-up) with nothing queued.
    public static func nap(until next: Date?, now: Date, longest: Duration) -> Duration? {
        guard let next else { return nil }
        let longestSeconds = longest.inSeconds
        let wait = min(max(next.timeIntervalSince(now), 0.001), longestSeconds)
        return Duration.seconds(validating: wait, in: 0.001...longestSeconds) ?? longest
    }
}
