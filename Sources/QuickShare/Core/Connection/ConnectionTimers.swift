/// When a Quick Share connection sends a keep-alive and when it gives up, as a pure machine with the
/// clock passed in: a keep-alive every `keepAliveInterval` once the channel is secure (Android ends
/// a connection that sent none for a while: NearDrop `PROTOCOL.md`, "Keep-alive frames"), and the
/// end when nothing was heard for `idleLimit`, when the sender did not get to its offer within
/// `setupLimit`, when the person did not answer within `answerLimit`, or when the payloads did not
/// all come within the allowance of their bytes (at `minimumBytesPerSecond`, after `setupLimit`).
public struct ConnectionTimers: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public enum Due: Sendable, Equatable {
        /// Nothing before `until`.
        case nothing(until: Instant)
        case keepAlive
        case giveUp(String)
    }

    public struct Limits: Sendable, Equatable {
        public var keepAliveInterval: Duration = .seconds(10)
        public var idleLimit: Duration = .seconds(30)
        public var setupLimit: Duration = .seconds(30)
        public var answerLimit: Duration = .seconds(60)
        /// The slowest transfer taken: a connection that took its offer is given its bytes at this rate.
        public var minimumBytesPerSecond: Int64 = 64 << 10

        public init() {}
    }

    public let limits: Limits
    private let opened: Instant
    private var lastHeard: Instant
    private var lastKeepAlive: Instant?
    private var asked: Instant?
    private var answered = false
    /// When the payloads of the answered offer must all have come.
    private var transferDeadline: Instant?

    public init(opened: Instant, limits: Limits = Limits()) {
        self.opened = opened
        self.limits = limits
        lastHeard = opened
    }

    /// Timers for the sending side, whose own deadline bounds the offer and the transfer: keep-alives
    /// and the idle limit alone.
    public static func sending(opened now: Instant, limits: Limits = Limits()) -> ConnectionTimers {
        var timers = ConnectionTimers(opened: now, limits: limits)
        timers.asked = now
        timers.answered = true
        return timers
    }

    /// A frame came.
    public mutating func heard(at now: Instant) { lastHeard = now }
    /// The channel became secure, or a keep-alive was sent: the next is due an interval later.
    public mutating func keptAlive(at now: Instant) { lastKeepAlive = now }
    /// The offer was put to the person (or the policy).
    public mutating func asked(at now: Instant) { asked = now }
    /// The offer was answered at `now`; its `bytes` must come within their allowance, when taken.
    public mutating func answeredOffer(at now: Instant, transferring bytes: Int64) {
        answered = true
        let seconds = Double(max(bytes, 0)) / Double(max(limits.minimumBytesPerSecond, 1))
        transferDeadline = now + limits.setupLimit + .seconds(min(seconds, 7 * 86_400))
    }

    /// What is due at `now`.
    public func due(at now: Instant) -> Due {
        if now - lastHeard >= limits.idleLimit { return .giveUp("nothing came for \(limits.idleLimit)") }
        if asked == nil, now - opened >= limits.setupLimit {
            return .giveUp("no offer came within \(limits.setupLimit)")
        }
        if let asked, !answered, now - asked >= limits.answerLimit {
            return .giveUp("the offer went unanswered for \(limits.answerLimit)")
        }
        if let transferDeadline, now >= transferDeadline { return .giveUp("the payloads came too slowly") }
        var next = lastHeard + limits.idleLimit
        if asked == nil { next = min(next, opened + limits.setupLimit) }
        if let asked, !answered { next = min(next, asked + limits.answerLimit) }
        if let transferDeadline { next = min(next, transferDeadline) }
        if let lastKeepAlive {
            if now - lastKeepAlive >= limits.keepAliveInterval { return .keepAlive }
            next = min(next, lastKeepAlive + limits.keepAliveInterval)
        }
        return .nothing(until: next)
    }
}
