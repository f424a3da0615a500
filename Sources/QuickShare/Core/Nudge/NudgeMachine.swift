/// When hexd asks the system to send the Bluetooth LE advertisement that wakes phones, as a pure
/// machine with the clock passed in. Android publishes itself as a Quick Share receiver only while its
/// person has the receive screen open, or for a while after it sees a would-be sender's advertisement
/// (rquickshare `hdl/blea.rs`, pyquickshare `mdns/send.py`): hexd advertises while a send to a Quick
/// Share device waits, and for `refreshSpan` after the person asks to look again (`hexctl peers
/// --refresh`).
///
/// A waiting send is marked when one of its attempts fails and unmarked when one to that device goes
/// through; a mark lapses `markSpan` after the attempt that made it, so a send the person cancelled
/// (or that expired) stops the advertisement within that span: it is longer than the outbox's
/// longest wait between attempts, so a send still waiting keeps its mark fresh. But not for ever: a
/// device's attempts wake phones for at most `nudgeLimit` in a row, as a phone that woke most likely
/// came back under another endpoint ID than the one the send waits for (Android makes a new one each
/// time it advertises: google/nearby `connections/implementation/client_proxy.cc`). A send that is no
/// longer tried for `markSpan` is forgotten, and a later one wakes phones again. When the system cannot
/// advertise, the machine asks again after `retrySpan`, while still wanted.
///
/// The driver asks `next(at:)` what to do, does it, and says how it went (`registered`, `failed`,
/// `unregistered`); the system may end an advertisement by itself (`released`).
public struct NudgeMachine: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public enum Phase: Sendable, Equatable {
        case idle
        case registering
        case advertising
        case unregistering
        /// The system could not advertise, or stopped: asked again at `retryAt`, if still wanted.
        case unavailable(reason: String, retryAt: Instant)
    }

    /// What the driver does now.
    public enum Step: Sendable, Equatable {
        case register
        case unregister
        /// Nothing until `until` (nil: until an event).
        case wait(until: Instant?)
    }

    public struct Spans: Sendable, Equatable {
        /// How long after a failed attempt its send counts as waiting: above the outbox's longest wait
        /// between attempts (300 s, `RetrySchedule`).
        public var markSpan: Duration = .seconds(330)
        /// The longest one device's failing attempts wake phones in a row.
        public var nudgeLimit: Duration = .seconds(600)
        /// How long `hexctl peers --refresh` wakes phones for.
        public var refreshSpan: Duration = .seconds(60)
        /// How long after the system could not advertise it is asked again.
        public var retrySpan: Duration = .seconds(60)

        public init() {}
    }

    /// At most this many devices' sends are marked; past it the mark tried longest ago makes room.
    public static let maximumMarks = 256

    /// A device's run of failed attempts.
    private struct Mark: Sendable {
        let first: Instant
        var last: Instant
        /// When it stops waking phones.
        var until: Instant
    }

    public let spans: Spans
    public private(set) var phase: Phase = .idle
    /// Why the system could not advertise the last time it was asked, until it can.
    public private(set) var lastFailure: String?
    /// The devices with a waiting send.
    private var marks: [String: Mark] = [:]
    private var refreshUntil: Instant?

    public init(spans: Spans = Spans()) {
        self.spans = spans
    }

    /// Whether phones should be woken at `now`.
    public func wanted(at now: Instant) -> Bool {
        marks.values.contains { $0.until > now } || (refreshUntil.map { $0 > now } ?? false)
    }

    /// An attempt at a send to `device` failed: it waits in the outbox.
    public mutating func sendWaits(for device: String, at now: Instant) {
        // A device no longer tried for `markSpan` has no send waiting any more.
        marks = marks.filter { now < $0.value.last + spans.markSpan }
        if var mark = marks[device] {
            mark.last = now
            mark.until = min(now + spans.markSpan, mark.first + spans.nudgeLimit)
            marks[device] = mark
            return
        }
        if marks.count >= Self.maximumMarks, let stalest = marks.min(by: { $0.value.last < $1.value.last }) {
            marks[stalest.key] = nil
        }
        marks[device] = Mark(first: now, last: now, until: now + spans.markSpan)
    }

    /// A send to `device` went through: its waiting sends no longer need phones woken.
    public mutating func sendWent(to device: String) {
        marks[device] = nil
    }

    /// The person asked to look for devices again.
    public mutating func refreshed(at now: Instant) {
        refreshUntil = max(refreshUntil ?? now, now + spans.refreshSpan)
    }

    /// The system advertises.
    public mutating func registered() {
        guard phase == .registering else { return }
        phase = .advertising
        lastFailure = nil
    }

    /// The system could not advertise, or stopped: why, for the status.
    public mutating func failed(_ reason: String, at now: Instant) {
        phase = .unavailable(reason: reason, retryAt: now + spans.retrySpan)
        lastFailure = reason
    }

    /// The advertisement was withdrawn as asked.
    public mutating func unregistered() {
        if phase == .unregistering { phase = .idle }
    }

    /// The system ended the advertisement by itself (its adapter went away, or it restarted).
    public mutating func released(at now: Instant) {
        guard phase == .advertising else { return }
        failed("the Bluetooth service ended the advertisement", at: now)
    }

    /// What to do at `now`; `register` and `unregister` move to their phase, awaiting the outcome.
    public mutating func next(at now: Instant) -> Step {
        let wanted = wanted(at: now)
        switch phase {
        case .idle where wanted:
            phase = .registering
            return .register
        case .unavailable(_, let retryAt) where wanted && now >= retryAt:
            phase = .registering
            return .register
        case .unavailable where !wanted:
            // At rest again; `lastFailure` still says why it could not.
            phase = .idle
            return .wait(until: nil)
        case .advertising where !wanted:
            phase = .unregistering
            return .unregister
        case .registering, .unregistering:
            return .wait(until: nil)
        case .idle, .advertising, .unavailable:
            return .wait(until: nextChange(after: now))
        }
    }

    /// The next time the answer of `next` may change without an event: the last mark or the refresh
    /// lapsing while advertising, or the time to ask the system again while wanted.
    private func nextChange(after now: Instant) -> Instant? {
        switch phase {
        case .advertising:
            (marks.values.map(\.until) + [refreshUntil].compactMap { $0 }).filter { $0 > now }.max()
        case .unavailable(_, let retryAt) where wanted(at: now):
            retryAt
        case .idle, .registering, .unregistering, .unavailable:
            nil
        }
    }
}
