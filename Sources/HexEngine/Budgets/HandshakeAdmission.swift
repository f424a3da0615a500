/// Which new TLS connections get a handshake: decided for each one as it is accepted, before any
/// cryptography (a handshake's key share and signature are what a flood of ClientHellos makes a
/// server spend). Every TLS listener of the daemon asks the one instance.
///
/// - A connection from an address a known peer was last seen at (`markKnown`) takes a token from
///   that address's own bucket (`Budgets.perKnownAddress`, ten times all strangers' rate): a
///   stranger's flood cannot crowd out the peers hexd knows, and a known peer turned hostile is
///   still bounded.
/// - A stranger's takes a token from three buckets: its address's (`Budgets.perAddress` a
///   second), its prefix's (a /24 or a /64, as the daemon maps it: `Budgets.perPrefix`), and all
///   strangers' together (`Budgets.total`). An address whose own bucket ran dry is an offender for
///   `offenceMemory`.
/// - A newcomer (an address that made at most `newcomerConnections` connections, counted since it
///   was last silent for `heardMemory`) refused by its prefix's or the total bucket takes one from
///   the newcomers' reserve instead (`Budgets.newcomers` a second): a flood comes again and again
///   from the addresses it holds, which are soon newcomers no more, so an honest stranger arriving
///   during it (and trying again a few times) still gets through, at a bounded rate. An attacker
///   with ever new addresses (an IPv6 /64 holds many) shares the reserve with it.
///
/// What strangers' handshakes cost is so bounded by `total` plus `newcomers` a second, whatever
/// they send (plus each bucket's burst, `Budgets.burstSeconds` of its rate). At most `capacity`
/// addresses and prefixes are remembered (the one used longest ago forgotten first), every step
/// O(1).
///
/// Pure: the caller passes the time in.
public struct HandshakeAdmission<Address: Hashable & Sendable>: Sendable {
    /// Handshakes a second each bucket refills with.
    public struct Budgets: Sendable, Equatable {
        public var perAddress: Double
        public var perPrefix: Double
        public var total: Double
        public var newcomers: Double
        public var perKnownAddress: Double
        /// Each bucket holds this many seconds of its rate, to take bursts.
        public var burstSeconds: Double

        /// The budgets `--stranger-handshakes` makes of `strangerHandshakes` a second in all: an
        /// address a tenth of it, a prefix half, newcomers a tenth beside (each at least one), a
        /// known peer's address ten times it; bursts of 4 s.
        public init(strangerHandshakes: Int) {
            let rate = Double(max(strangerHandshakes, 1))
            perAddress = max(rate / 10, 1)
            perPrefix = max(rate / 2, 1)
            total = rate
            newcomers = max(rate / 10, 1)
            perKnownAddress = rate * 10
            burstSeconds = 4
        }
    }

    public enum Decision: Sendable, Equatable {
        /// A handshake for a known peer's address.
        case known
        /// A handshake for a stranger.
        case stranger
        /// Closed before the handshake. `newOffence`: the address just became an offender (the
        /// moment to say so in the log).
        case refused(Refusal, newOffence: Bool)
    }

    /// The budget a refused connection was past.
    public enum Refusal: Sendable, Equatable {
        case address, prefix, total
    }

    public let budgets: Budgets
    /// An address stays an offender this long after its own bucket last ran dry.
    public static var offenceMemory: Duration { .seconds(60) }
    /// An address marked known stays so this long after it was last marked.
    public static var knownMemory: Duration { .seconds(3_600) }
    /// An address is a newcomer for this many connections...
    public static var newcomerConnections: Int { 3 }
    /// ...counted again from none after this long without one.
    public static var heardMemory: Duration { .seconds(600) }

    private let prefix: @Sendable (Address) -> Address
    private var addresses: BucketTable<Address>
    private var knownAddresses: BucketTable<Address>
    private var prefixes: BucketTable<Address>
    private var total: TokenBucket
    private var newcomers: TokenBucket
    private var offenders: ExpiringSet<Address>
    private var known: ExpiringSet<Address>
    /// Strangers' addresses heard from lately, with how many connections each made.
    private var heard: ExpiringSet<Address>

    /// - Parameters:
    ///   - prefix: the prefix an address is in, as an address (its host bits zero).
    ///   - capacity: addresses (and as many prefixes, offenders and known addresses) remembered.
    public init(budgets: Budgets, capacity: Int = 4_096, prefix: @escaping @Sendable (Address) -> Address) {
        self.budgets = budgets
        self.prefix = prefix
        let burst = budgets.burstSeconds
        addresses = BucketTable(rate: budgets.perAddress, burst: budgets.perAddress * burst, capacity: capacity)
        knownAddresses = BucketTable(
            rate: budgets.perKnownAddress, burst: budgets.perKnownAddress * burst, capacity: capacity)
        prefixes = BucketTable(rate: budgets.perPrefix, burst: budgets.perPrefix * burst, capacity: capacity)
        total = TokenBucket(rate: budgets.total, burst: budgets.total * burst)
        newcomers = TokenBucket(rate: budgets.newcomers, burst: budgets.newcomers * burst)
        offenders = ExpiringSet(lifetime: Self.offenceMemory, capacity: capacity)
        known = ExpiringSet(lifetime: Self.knownMemory, capacity: capacity)
        heard = ExpiringSet(lifetime: Self.heardMemory, capacity: capacity)
    }

    /// The most entries any of its tables holds: never more than `capacity`.
    public var remembered: Int {
        [addresses.count, knownAddresses.count, prefixes.count, offenders.count, known.count, heard.count].max() ?? 0
    }

    /// A known peer was seen at `address` (a connection its paired key proved, a delivery to it).
    public mutating func markKnown(_ address: Address, at now: ContinuousClock.Instant) {
        known.insert(address, at: now)
    }

    /// Whether the connection just accepted from `address` gets its handshake.
    public mutating func decide(_ address: Address, at now: ContinuousClock.Instant) -> Decision {
        if known.contains(address, at: now) {
            return knownAddresses.take(address, at: now) ? .known : refusal(.address, of: address, at: now)
        }
        heard.insert(address, at: now)
        let isNewcomer = heard.insertions(of: address, at: now) <= Self.newcomerConnections
        guard addresses.take(address, at: now) else { return refusal(.address, of: address, at: now) }
        let prefixAdmits = prefixes.take(prefix(address), at: now)
        if prefixAdmits && total.take(at: now) { return .stranger }
        if isNewcomer && newcomers.take(at: now) { return .stranger }
        return .refused(prefixAdmits ? .total : .prefix, newOffence: false)
    }

    /// A refusal past `address`'s own bucket: it is an offender now.
    private mutating func refusal(
        _ budget: Refusal, of address: Address, at now: ContinuousClock.Instant
    ) -> Decision {
        let new = !offenders.contains(address, at: now)
        offenders.insert(address, at: now)
        return .refused(budget, newOffence: new)
    }
}
