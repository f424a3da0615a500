/// A token bucket: up to `burst` at once, refilled at `rate` a second. Pure: the caller passes
/// the clock.
public struct TokenBucket: Equatable, Sendable {
    public let rate: Double
    public let burst: Double
    public private(set) var tokens: Double
    public private(set) var last: ContinuousClock.Instant?

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Whether the bucket is full at `now` (nothing taken for at least `burst / rate` seconds).
    public mutating func isFull(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        return tokens >= burst
    }

    /// Takes a token if there is one at `now`.
    public mutating func take(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    private mutating func refill(at now: ContinuousClock.Instant) {
        if let last, now > last { tokens = min(burst, tokens + (now - last).inSeconds * rate) }
        last = max(last ?? now, now)
    }
}
