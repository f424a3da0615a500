/// A token bucket per key, for at most `capacity` keys: past it, the key used longest ago is
/// forgotten (and starts again with a full bucket if it comes back). Every operation is O(1), so
/// a flood of invented keys costs as little as one key's.
public struct BucketTable<Key: Hashable & Sendable>: Sendable {
    public let rate: Double
    public let burst: Double
    public let capacity: Int
    private var buckets: [Key: TokenBucket] = [:]
    private var recency = RecencyList<Key>()

    public init(rate: Double, burst: Double, capacity: Int) {
        self.rate = rate
        self.burst = burst
        self.capacity = max(capacity, 1)
    }

    /// Keys with a bucket now.
    public var count: Int { buckets.count }

    /// Takes a token of `key`'s bucket at `now`, if it has one.
    public mutating func take(_ key: Key, at now: ContinuousClock.Instant) -> Bool {
        if buckets[key] == nil, buckets.count >= capacity, let oldest = recency.oldest {
            buckets[oldest] = nil
            recency.remove(oldest)
        }
        var bucket = buckets[key] ?? TokenBucket(rate: rate, burst: burst)
        let taken = bucket.take(at: now)
        buckets[key] = bucket
        recency.touch(key)
        return taken
    }
}
