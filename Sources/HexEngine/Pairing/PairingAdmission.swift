import HexKit

/// How fast strangers may ask to pair, and when a flood of them began.
///
/// Pairing requests from keys not pinned here, and from peers not announced before a flood, are
/// admitted by a token bucket (`rate` a second, up to `burst` at once). While it is empty a flood
/// is under way: peers first heard from since it began count as strangers, so that a flood of
/// fresh keys announcing themselves cannot pass for peers known before it. Pure bookkeeping: the
/// pairing service feeds it the clock.
public struct PairingAdmission: Sendable {
    public static let rate = 5.0
    public static let burst = 10.0
    /// How long the bucket must stay full again before a flood is over.
    public static let calm = Duration.seconds(10)

    private var bucket = TokenBucket(rate: Self.rate, burst: Self.burst)
    /// When the current flood began; nil when there is none.
    public private(set) var floodSince: ContinuousClock.Instant?
    private var fullSince: ContinuousClock.Instant?

    public init() {}

    /// Takes a stranger's request if the rate allows it.
    public mutating func admitStranger(at now: ContinuousClock.Instant) -> Bool {
        noteCalm(at: now)
        guard bucket.take(at: now) else {
            if floodSince == nil { floodSince = now }
            fullSince = nil
            return false
        }
        return true
    }

    /// Whether a peer first heard from at `firstSeen` was known before any flood under way.
    public mutating func knewBefore(_ firstSeen: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Bool {
        noteCalm(at: now)
        return floodSince.map { firstSeen < $0 } ?? true
    }

    /// Ends the flood once the bucket has stayed full for `calm`.
    private mutating func noteCalm(at now: ContinuousClock.Instant) {
        guard bucket.isFull(at: now) else {
            fullSince = nil
            return
        }
        if fullSince == nil { fullSince = now }
        if let fullSince, now - fullSince >= Self.calm { floodSince = nil }
    }
}
