/// Which new TLS connections get a handshake: decided for each one as it is accepted, before any
/// cryptography (a handshake's key share and signature are what a flood of ClientHellos makes a
/// server spend). Every TLS listener of the daemon asks the one instance.
///
/// - A connection from an address a known peer was last seen at (`markKnown`) is always let
///   through: a stranger's flood cannot crowd out the peers hexd knows.
/// - A stranger's takes a token from three buckets: its address's (`Budgets.perAddress` a
///   second), its prefix's (a /24 or a /64, as the daemon maps it: `Budgets.perPrefix`), and all
///   strangers' together (`Budgets.total`). An address whose own bucket ran dry is an offender for
///   `offenceMemory`.
/// - A stranger's first connection from an address not heard from within `newcomerMemory`,
///   refused by its prefix's or the total bucket, takes one from the newcomers' reserve instead
///   (`Budgets.newcomers` a second): a flood comes again and again from the addresses it holds,
///   so an honest stranger arriving during it still gets through, at a bounded rate.
///
/// What strangers' handshakes cost is so bounded by `total` plus `newcomers` a second, whatever
/// they send. Each bucket holds `Budgets.burstSeconds` of its rate. At most `capacity` addresses
/// and prefixes are remembered (the one used longest ago forgotten first), every step O(1).
///
/// Pure: the caller passes the time in.
public struct HandshakeAdmission<Address: Hashable & Sendable>: Sendable {
    /// Handshakes a second each bucket refills with.
    public struct Budgets: Sendable, Equatable {
        public var perAddress: Double
        public var perPrefix: Double
        public var total: Double
        public var newcomers: Double
        /// Each bucket holds this many seconds of its rate, to take bursts.
        public var burstSeconds: Double

        public init(
            perAddress: Double = 2, perPrefix: Double = 16, total: Double = 32, newcomers: Double = 4,
            burstSeconds: Double = 4
        ) {
            self.perAddress = perAddress
            self.perPrefix = perPrefix
            self.total = total
            self.newcomers = newcomers
            self.burstSeconds = burstSeconds
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
    public enum Refusal: String, Sendable, Equatable {
        case address, prefix, total
    }

    public let budgets: Budgets
    /// An address stays an offender this long after its own bucket last ran dry.
    public static var offenceMemory: Duration { .seconds(60) }
    /// An address marked known stays so this long after it was last marked.
    public static var knownMemory: Duration { .seconds(3_600) }
    /// An address is a newcomer again when not heard from for this long.
    public static var newcomerMemory: Duration { .seconds(600) }

    private let prefix: @Sendable (Address) -> Address
    private var addresses: BucketTable<Address>
    private var prefixes: BucketTable<Address>
    private var total: TokenBucket
    private var newcomers: TokenBucket
    private var offenders: ExpiringSet<Address>
    private var known: ExpiringSet<Address>
    /// Strangers' addresses heard from lately: the others are newcomers.
    private var heard: ExpiringSet<Address>

    /// - Parameters:
    ///   - prefix: the prefix an address is in, as an address (its host bits zero).
    ///   - capacity: addresses (and as many prefixes, offenders and known addresses) remembered.
    public init(budgets: Budgets = Budgets(), capacity: Int = 4_096, prefix: @escaping @Sendable (Address) -> Address) {
        self.budgets = budgets
        self.prefix = prefix
        let burst = budgets.burstSeconds
        addresses = BucketTable(rate: budgets.perAddress, burst: budgets.perAddress * burst, capacity: capacity)
        prefixes = BucketTable(rate: budgets.perPrefix, burst: budgets.perPrefix * burst, capacity: capacity)
        total = TokenBucket(rate: budgets.total, burst: budgets.total * burst)
        newcomers = TokenBucket(rate: budgets.newcomers, burst: budgets.newcomers * burst)
        offenders = ExpiringSet(lifetime: Self.offenceMemory, capacity: capacity)
        known = ExpiringSet(lifetime: Self.knownMemory, capacity: capacity)
        heard = ExpiringSet(lifetime: Self.newcomerMemory, capacity: capacity)
    }

    /// A known peer was seen at `address` (a beacon its key signed, a connection its key proved).
    public mutating func markKnown(_ address: Address, at now: ContinuousClock.Instant) {
        known.insert(address, at: now)
    }

    /// Whether the connection just accepted from `address` gets its handshake.
    public mutating func decide(_ address: Address, at now: ContinuousClock.Instant) -> Decision {
        if known.contains(address, at: now) { return .known }
        let isNewcomer = !heard.contains(address, at: now)
        heard.insert(address, at: now)
        guard addresses.take(address, at: now) else {
            let new = !offenders.contains(address, at: now)
            offenders.insert(address, at: now)
            return .refused(.address, newOffence: new)
        }
        let prefixAdmits = prefixes.take(prefix(address), at: now)
        if prefixAdmits && total.take(at: now) { return .stranger }
        if isNewcomer && newcomers.take(at: now) { return .stranger }
        return .refused(prefixAdmits ? .total : .prefix, newOffence: false)
    }
}
