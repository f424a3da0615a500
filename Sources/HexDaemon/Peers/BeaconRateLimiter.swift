import HexKit
import HexNet

/// How many beacons each source address may have handled: a token bucket per address, holding up
/// to two seconds' worth, refilled at `rate` per second. A host flooding the discovery port is
/// held to its rate while every other host's beacons go on being read.
///
/// It tracks at most `maximumSources` addresses; past that the address heard from longest ago is
/// forgotten (it starts again with a full bucket), so spoofed source addresses cannot grow it.
struct BeaconRateLimiter {
    let rate: Double
    let maximumSources: Int

    private var buckets: [IPv4Address: TokenBucket] = [:]

    init(rate: Int, maximumSources: Int = 4_096) {
        self.rate = Double(max(rate, 1))
        self.maximumSources = maximumSources
    }

    /// Whether a beacon from `source` may be handled now (and if so, it is counted).
    mutating func admit(_ source: IPv4Address, at now: ContinuousClock.Instant) -> Bool {
        var bucket = buckets[source] ?? TokenBucket(rate: rate, burst: rate * 2)
        let admitted = bucket.take(at: now)
        if buckets[source] == nil, buckets.count >= maximumSources,
           let oldest = buckets.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) }) {
            buckets[oldest.key] = nil
        }
        buckets[source] = bucket
        return admitted
    }
}
