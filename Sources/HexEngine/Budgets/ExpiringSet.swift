/// Keys that each stay for `lifetime` after they were last inserted, at most `capacity` of them
/// (past it, the one inserted longest ago goes). O(1) a step.
struct ExpiringSet<Key: Hashable & Sendable>: Sendable {
    let lifetime: Duration
    let capacity: Int
    private var inserted: [Key: ContinuousClock.Instant] = [:]
    private var recency = RecencyList<Key>()

    init(lifetime: Duration, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = max(capacity, 1)
    }

    mutating func insert(_ key: Key, at now: ContinuousClock.Instant) {
        if inserted[key] == nil, inserted.count >= capacity, let oldest = recency.oldest {
            inserted[oldest] = nil
            recency.remove(oldest)
        }
        inserted[key] = now
        recency.touch(key)
    }

    /// Whether `key` is there at `now` (one whose time is over is removed).
    mutating func contains(_ key: Key, at now: ContinuousClock.Instant) -> Bool {
        guard let time = inserted[key] else { return false }
        guard now - time < lifetime else {
            inserted[key] = nil
            recency.remove(key)
            return false
        }
        return true
    }
}
