/// When a Quick Share connection sends a keep-alive and when it gives up, as a pure machine with the
/// clock passed in: a keep-alive every `keepAliveInterval` once the channel is secure (Android ends
/// a connection that sent none for a while: NearDrop `PROTOCOL.md`, "Keep-alive frames"), and the
/// end when nothing was heard for `idleLimit`, when the sender did not get to its offer within
/// `setupLimit`, or when the person did not answer within `answerLimit`.
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

        public init() {}
    }

    public let limits: Limits
    private let opened: Instant
    private var lastHeard: Instant
    private var lastKeepAlive: Instant?
    private var asked: Instant?
    private var answered = false

    public init(opened: Instant, limits: Limits = Limits()) {
        self.opened = opened
        self.limits = limits
        lastHeard = opened
    }

    /// A frame came.
    public mutating func heard(at now: Instant) { lastHeard = now }
    /// The channel became secure, or a keep-alive was sent: the next is due an interval later.
    public mutating func keptAlive(at now: Instant) { lastKeepAlive = now }
    /// The offer was put to the person (or the policy).
    public mutating func asked(at now: Instant) { asked = now }
    public mutating func answeredOffer() { answered = true }

    /// What is due at `now`.
    public func due(at now: Instant) -> Due {
        if now - lastHeard >= limits.idleLimit { return .giveUp("nothing came for \(limits.idleLimit)") }
        if asked == nil, now - opened >= limits.setupLimit {
            return .giveUp("no offer came within \(limits.setupLimit)")
        }
        if let asked, !answered, now - asked >= limits.answerLimit {
            return .giveUp("the offer went unanswered for \(limits.answerLimit)")
        }
        var next = lastHeard + limits.idleLimit
        if asked == nil { next = min(next, opened + limits.setupLimit) }
        if let asked, !answered { next = min(next, asked + limits.answerLimit) }
        if let lastKeepAlive {
            if now - lastKeepAlive >= limits.keepAliveInterval { return .keepAlive }
            next = min(next, lastKeepAlive + limits.keepAliveInterval)
        }
        return .nothing(until: next)
    }
}
