import HexKit

/// How many beacons are handled, in three token buckets (each holding two seconds' worth):
///
/// - per sender, that is per claimed peer and source address: `rate` a second, checked once the
///   datagram reads as a beacon. A daemon, or one claim from one host, is held to its rate while
///   every other daemon on that host is read on: many daemons on one host (all of them sending
///   from the one shared discovery port) or on one segment all find each other;
/// - per source address: `addressFactor` times that, checked before a datagram is even read, so
///   that one host flooding the port with anything costs little;
/// - all sources together: `totalFactor` times that, the bound on what a flood from many
///   (spoofed) addresses can cost. The addresses of peers hexes were exchanged with are not
///   counted in it (only in their own address's budget): a flood of strangers cannot drown a
///   known peer's beacons until it expires. At most `maximumSources` such addresses are kept.
///
/// It tracks at most `maximumSources` senders and as many addresses; past that the one heard from
/// longest ago is forgotten (it starts again with a full bucket), so that invented addresses or
/// peers cannot grow it.
/// Generic over the source address, so that it is the same for every kind of peer: the daemon uses
/// HexNet's `Address`.
public struct BeaconRateLimiter<Address: Hashable & Sendable>: Sendable {
    /// A sender: a claimed peer at a source address.
    private struct Sender: Hashable, Sendable {
        let address: Address
        let peer: String
    }

    public let rate: Double
    public let maximumSources: Int
    /// A source address may send this many times `rate`: sixteen daemons on one host at the full
    /// rate, hundreds at the one or two beacons a second daemons send.
    public static var addressFactor: Double { 16 }
    /// All sources together may send this many times `rate`.
    public static var totalFactor: Double { 64 }

    private var senders: BucketTable<Sender>
    /// The addresses of peers hexes were exchanged with, and when they were marked so.
    private var known: [Address: ContinuousClock.Instant] = [:]
    private var addresses: BucketTable<Address>
    private var total: TokenBucket

    public init(rate: Int, maximumSources: Int = 4_096) {
        self.rate = Double(max(rate, 1))
        self.maximumSources = maximumSources
        total = TokenBucket(rate: self.rate * Self.totalFactor, burst: self.rate * Self.totalFactor * 2)
        senders = BucketTable(rate: self.rate, burst: self.rate * 2, capacity: maximumSources)
        let addressRate = self.rate * Self.addressFactor
        addresses = BucketTable(rate: addressRate, burst: addressRate * 2, capacity: maximumSources)
    }

    /// Whether a datagram from `source` may be read now (and if so, it is counted against the
    /// address's budget and the total).
    public mutating func admit(_ source: Address, at now: ContinuousClock.Instant) -> Bool {
        addresses.take(source, at: now) && (known[source] != nil || total.take(at: now))
    }

    /// Exempts `address` from the budget of all sources together: a peer hexes were exchanged
    /// with is there (the one marked longest ago is forgotten past `maximumSources`).
    public mutating func markKnown(_ address: Address, at now: ContinuousClock.Instant) {
        if known[address] == nil, known.count >= maximumSources,
            let oldest = known.min(by: { $0.value < $1.value })
        {
            known[oldest.key] = nil
        }
        known[address] = now
    }

    /// Whether a beacon claiming `peer`, from `source`, may be handled now (and if so, it is counted).
    public mutating func admit(peer: String, from source: Address, at now: ContinuousClock.Instant) -> Bool {
        senders.take(Sender(address: source, peer: peer), at: now)
    }
}
