/// Keys that each stay for `lifetime` after they were last inserted, at most `capacity` of them
/// (past it, the one inserted longest ago goes), each with how many times it was inserted since it
/// came. O(1) a step.
public struct ExpiringSet<Key: Hashable & Sendable>: Sendable {
    public let lifetime: Duration
    public let capacity: Int
    private var times: [Key: (insertions: Int, last: ContinuousClock.Instant)] = [:]
    private var recency = RecencyList<Key>()

    public init(lifetime: Duration, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = max(capacity, 1)
    }

    /// Keys held now, expired ones not yet removed included.
    public var count: Int { times.count }

    public mutating func insert(_ key: Key, at now: ContinuousClock.Instant) {
        let held = insertions(of: key, at: now)
        if held == 0, times.count >= capacity, let oldest = recency.oldest {
            times[oldest] = nil
            recency.remove(oldest)
        }
        times[key] = (held &+ 1, now)
        recency.touch(key)
    }

    /// Whether `key` is there at `now` (one whose time is over is removed).
    public mutating func contains(_ key: Key, at now: ContinuousClock.Instant) -> Bool {
        insertions(of: key, at: now) > 0
    }

    /// How many times `key` was inserted since it came, 0 when it is not there at `now` (one whose
    /// time is over is removed).
    public mutating func insertions(of key: Key, at now: ContinuousClock.Instant) -> Int {
        guard let held = times[key] else { return 0 }
        guard now - held.last < lifetime else {
            times[key] = nil
            recency.remove(key)
            return 0
        }
        return held.insertions
    }
}
