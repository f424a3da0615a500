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

    private struct Bucket {
        var tokens: Double
        var last: ContinuousClock.Instant
    }

    private var buckets: [IPv4Address: Bucket] = [:]

    init(rate: Int, maximumSources: Int = 4_096) {
        self.rate = Double(max(rate, 1))
        self.maximumSources = maximumSources
    }

    private var burst: Double { rate * 2 }

    /// Whether a beacon from `source` may be handled now (and if so, it is counted).
    mutating func admit(_ source: IPv4Address, at now: ContinuousClock.Instant) -> Bool {
        var bucket = buckets[source] ?? Bucket(tokens: burst, last: now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.last).inSeconds * rate)
        bucket.last = now
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 }
        if buckets[source] == nil, buckets.count >= maximumSources, let oldest = buckets.min(by: { $0.value.last < $1.value.last }) {
            buckets[oldest.key] = nil
        }
        buckets[source] = bucket
        return admitted
    }
}
