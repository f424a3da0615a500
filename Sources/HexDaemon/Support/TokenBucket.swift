/// A token bucket: up to `burst` at once, refilled at `rate` a second. Pure: the caller passes
/// the clock.
struct TokenBucket: Equatable, Sendable {
    let rate: Double
    let burst: Double
    private(set) var tokens: Double
    private(set) var last: ContinuousClock.Instant?

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Whether the bucket is full at `now` (nothing taken for at least `burst / rate` seconds).
    mutating func isFull(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        return tokens >= burst
    }

    /// Takes a token if there is one at `now`.
    mutating func take(at now: ContinuousClock.Instant) -> Bool {
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
