/// Lets through one event per key per interval, for a bounded number of keys: a log line per
/// sender per minute, however many senders a flood invents.
public struct KeyedThrottle<Key: Hashable & Sendable>: Sendable {
    public let interval: Duration
    /// Keys remembered at once; when full, those past their interval are forgotten, and if none
    /// is, new keys are let through unremembered (a flood of keys is already bounded by the log's
    /// own limiter).
    public let capacity: Int
    private var lastAdmitted: [Key: ContinuousClock.Instant] = [:]

    public init(interval: Duration, capacity: Int) {
        self.interval = interval
        self.capacity = capacity
    }

    /// Whether an event for `key` at `now` is let through.
    public mutating func admit(_ key: Key, at now: ContinuousClock.Instant) -> Bool {
        if let last = lastAdmitted[key], now - last < interval { return false }
        if lastAdmitted[key] == nil && lastAdmitted.count >= capacity {
            lastAdmitted = lastAdmitted.filter { now - $0.value < interval }
            guard lastAdmitted.count < capacity else { return true }
        }
        lastAdmitted[key] = now
        return true
    }
}
