/// When to hand freed memory back to the system (`malloc_trim`) after connections end: once
/// reports of freed memory stop for `quiet` (a burst is over), or `interval` after the first one
/// while they go on; and never twice within `interval`, so a steady trickle of connections costs
/// one trim per `interval`, while a burst after a calm is trimmed `quiet` after it ends.
///
/// Pure: the driver passes the time in and waits until `deadline`.
public struct TrimSchedule: Sendable {
    public typealias Instant = ContinuousClock.Instant
    public let quiet: Duration
    public let interval: Duration
    private var firstUnserved: Instant?
    private var lastReport: Instant?
    private var lastTrim: Instant?

    public init(quiet: Duration = .seconds(1), interval: Duration = .seconds(10)) {
        self.quiet = quiet
        self.interval = interval
    }

    /// Memory was freed at `now`.
    public mutating func reported(at now: Instant) {
        if firstUnserved == nil { firstUnserved = now }
        lastReport = now
    }

    /// When the next trim is due; nil when no report waits for one.
    public var deadline: Instant? {
        guard let firstUnserved, let lastReport else { return nil }
        let due = min(lastReport + quiet, firstUnserved + interval)
        return lastTrim.map { max(due, $0 + interval) } ?? due
    }

    /// Whether to trim at `now` (then the reports so far are served).
    public mutating func tick(at now: Instant) -> Bool {
        guard let deadline, now >= deadline else { return false }
        firstUnserved = nil
        lastReport = nil
        lastTrim = now
        return true
    }
}
