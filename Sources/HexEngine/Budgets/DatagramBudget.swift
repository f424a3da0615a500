/// How many datagrams of a foreign protocol's discovery (LocalSend's announcements, KDE Connect's
/// identities) are read: `rate` a second from one source address, in bursts of up to twice that,
/// and `totalFactor` times that from all sources together, the bound on what a flood from many
/// (spoofed) addresses can cost. It is checked before a datagram is parsed.
///
/// At most `capacity` addresses are tracked; past that the one heard from longest ago is
/// forgotten (it starts again with a full bucket), so that invented addresses cannot grow it.
/// hexd's own beacons have `BeaconRateLimiter`, which also budgets each claimed peer.
public struct DatagramBudget<Address: Hashable & Sendable>: Sendable {
    /// Datagrams a second from one address; twice as many may come at once.
    public let rate: Double
    /// All addresses together may send this many times `rate`.
    public static var totalFactor: Double { 16 }

    private var addresses: BucketTable<Address>
    private var total: TokenBucket

    public init(rate: Int, capacity: Int = 4_096) {
        self.rate = Double(max(rate, 1))
        addresses = BucketTable(rate: self.rate, burst: self.rate * 2, capacity: capacity)
        let totalRate = self.rate * Self.totalFactor
        total = TokenBucket(rate: totalRate, burst: totalRate * 2)
    }

    /// Whether a datagram from `source` may be read now (and if so, it is counted).
    public mutating func admit(_ source: Address, at now: ContinuousClock.Instant) -> Bool {
        addresses.take(source, at: now) && total.take(at: now)
    }
}
