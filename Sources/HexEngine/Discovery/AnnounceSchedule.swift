import HexKit

/// When this daemon's beacons go out, and what each one is: a `query` at start (every daemon
/// already running then answers at once), a burst of two `announce`s 150 ms apart (a lost datagram
/// is common at start), then one every interval, longer on a crowded segment (`AnnounceInterval`).
/// It also decides the immediate answers to new, restarted or querying peers (at most one per
/// `answerSpacing`), when a visibility for a while ends, and when to say that no peer was heard.
///
/// Pure: the driver passes the time in, performs the actions and waits until `deadline`.
public struct AnnounceSchedule: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// What the driver does when the schedule says so.
    public enum Action: Sendable, Equatable {
        /// A beacon of this kind to every destination.
        case broadcast(Beacon.Kind)
        /// `quietBeacons` steady beacons went out and no peer was heard: say what a firewall
        /// must let through.
        case quietHint
        /// The visibility for a while is over: hide (and `hide()` the schedule).
        case visibilityEnded
    }

    /// What to do about a peer that should hear from this daemon now.
    public enum Answer: Sendable, Equatable {
        /// Announce at once: by unicast to it and by broadcast.
        case now
        /// An answer went out just now: the next beacon is brought forward instead, to answer it
        /// and every other peer that appears meanwhile with one broadcast. Wake the driver, which
        /// may wait for the old deadline.
        case broughtForward
        /// Nothing: hidden, or the next beacon is already that soon.
        case none
    }

    private enum Step: Sendable, Equatable {
        case query
        case burst(left: Int)
        case steady
    }

    /// Answers to peers at most this often; the beacons of a burst are this far apart too.
    public static let answerSpacing: Duration = .milliseconds(200)
    static let burstSpacing: Duration = .milliseconds(150)
    /// Steady beacons with no peer heard, past which `quietHint` is due.
    public static let quietBeacons = 30

    private let configured: Duration
    /// The interval announced now: the configured one, longer on a crowded segment.
    public private(set) var interval: Duration
    private var next: (due: Instant, step: Step)?
    private var visibilityEnd: Instant?
    private var lastAnswer: Instant?
    private var lastQuery: Instant?
    private var beaconsUnanswered = 0
    /// Whether the quiet hint was given since a peer was last heard.
    public private(set) var isQuiet = false

    /// - Parameter interval: the configured announce interval.
    public init(interval: Duration) {
        configured = interval
        self.interval = interval
    }

    /// Whether beacons go out (the daemon is visible).
    public var isAnnouncing: Bool { next != nil }

    /// When the driver must act next: a beacon, or the end of a visibility for a while; nil while
    /// hidden.
    public var deadline: Instant? {
        [next?.due, visibilityEnd].compactMap { $0 }.min()
    }

    /// Whether something is due at `now`.
    public func isDue(at now: Instant) -> Bool {
        deadline.map { $0 <= now } ?? false
    }

    /// Visible: beacons start from a query at `now`, unless they already go out. A visibility for
    /// a while passes when it ends; nil for one without end.
    /// - Returns: whether the driver must wake to the new deadline.
    @discardableResult
    public mutating func show(at now: Instant, until end: Instant? = nil) -> Bool {
        visibilityEnd = end
        guard next == nil else { return end != nil }
        next = (now, .query)
        return true
    }

    /// Hidden: no beacon is due, and the count toward the quiet hint starts over.
    public mutating func hide() {
        (next, visibilityEnd, beaconsUnanswered, isQuiet) = (nil, nil, 0, false)
    }

    /// What is due at `now`, in order, with the next beacon scheduled.
    /// - Parameter peers: the peers in the table now, which the steady interval grows with.
    public mutating func fire(at now: Instant, peers: Int) -> [Action] {
        if let end = visibilityEnd, end <= now {
            hide()
            return [.visibilityEnded]
        }
        guard let (due, step) = next, due <= now else { return [] }
        switch step {
        case .query:
            lastQuery = now
            next = (now + Self.burstSpacing, .burst(left: 2))
            return [.broadcast(.query)]
        case .burst(let left):
            next = left > 1 ? (now + Self.burstSpacing, .burst(left: left - 1)) : (now + interval, .steady)
            return [.broadcast(.announce)]
        case .steady:
            interval = AnnounceInterval.next(configured: configured, peers: peers, previous: interval)
            next = (now + interval, .steady)
            // A steady beacon answers whoever asks within the next `answerSpacing` too.
            lastAnswer = now
            beaconsUnanswered += 1
            guard beaconsUnanswered == Self.quietBeacons else { return [.broadcast(.announce)] }
            isQuiet = true
            return [.broadcast(.announce), .quietHint]
        }
    }

    /// A peer is new, restarted, or asks who is there. Within `answerSpacing` of the last answer,
    /// the next beacon is brought forward to when the next answer may go: one broadcast then
    /// answers every peer that appeared meanwhile (many daemons starting at once), where dropping
    /// the answer would leave them waiting for a steady beacon.
    public mutating func answerWanted(at now: Instant) -> Answer {
        guard let scheduled = next else { return .none }
        if let last = lastAnswer, now - last < Self.answerSpacing {
            let allowed = last + Self.answerSpacing
            guard scheduled.due > allowed else { return .none }
            next = (allowed, scheduled.step)
            return .broughtForward
        }
        lastAnswer = now
        return .now
    }

    /// A peer's beacon got through.
    /// - Returns: whether the quiet hint was given (and is now withdrawn).
    public mutating func peerHeard() -> Bool {
        defer { (beaconsUnanswered, isQuiet) = (0, false) }
        return isQuiet
    }

    /// This host's links or addresses changed, or the user asked who is there (`hexctl peers
    /// --refresh`): beacons start over with a query 100 ms later, so that one change's several
    /// messages (the link, then its addresses) make one burst; a link that flaps, or a user who
    /// keeps asking, costs at most four queries a second. Hidden, nothing is sent.
    public mutating func queryAgain(at now: Instant) {
        guard let scheduled = next else { return }
        let due = max(now + .milliseconds(100), (lastQuery ?? now) + .milliseconds(250))
        if scheduled.step == .query, scheduled.due <= due { return }
        next = (due, .query)
    }
}
