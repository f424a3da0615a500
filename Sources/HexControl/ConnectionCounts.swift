/// What the envelope server's budgets did since the daemon started (`status`), so that a user
/// (or a test) can tell which budget closed connections, and how often.
public struct ConnectionCounts: Sendable, Codable, Equatable {
    /// Peer connections open now.
    public var open: Int
    /// Connections accepted in all.
    public var accepted: Int
    /// Newcomers closed at once: their address had `--max-connections-per-address` open.
    public var refusedPerAddress: Int
    /// Connections closed to make room past `--max-connections` (each the one longest without a line).
    public var closedForRoom: Int
    /// Connections closed at a deadline: no line begun within `--idle-timeout`, or a begun line
    /// not finished within `--line-grace` plus its time at `--line-min-rate`.
    public var closedAtDeadline: Int
    /// Connections cut off because unfinished lines together held more than `--partial-line-budget`.
    public var cutOffForPartialLines: Int
    /// Connections closed after a line longer than `--max-line`.
    public var closedForLongLines: Int
    /// Connections closed in their TLS handshake to make room past the cap on handshakes under
    /// way (each the one that began longest ago); nil from a daemon older than this field.
    public var closedInHandshake: Int?
    /// TLS handshakes completed with peers that connected; nil from a daemon older than this field.
    public var tlsHandshakes: Int?
    /// Of those, the ones that resumed a session of an earlier connection (no certificates
    /// exchanged); nil from a daemon older than this field.
    public var resumedHandshakes: Int?
    /// Connections to any of the daemon's TLS listeners (hexd's, LocalSend's) closed before their
    /// handshake: strangers past `--stranger-handshakes`; nil from a daemon older than this field.
    public var refusedBeforeHandshake: Int?
    /// Connections to those listeners from an address a known peer was last seen at, let through
    /// whatever strangers do; nil from a daemon older than this field.
    public var fromKnownPeers: Int?

    public init(
        open: Int = 0, accepted: Int = 0, refusedPerAddress: Int = 0, closedForRoom: Int = 0, closedAtDeadline: Int = 0,
        cutOffForPartialLines: Int = 0, closedForLongLines: Int = 0, closedInHandshake: Int? = 0,
        tlsHandshakes: Int? = 0, resumedHandshakes: Int? = 0, refusedBeforeHandshake: Int? = 0, fromKnownPeers: Int? = 0
    ) {
        self.refusedBeforeHandshake = refusedBeforeHandshake
        self.fromKnownPeers = fromKnownPeers
        self.closedInHandshake = closedInHandshake
        self.tlsHandshakes = tlsHandshakes
        self.resumedHandshakes = resumedHandshakes
        self.open = open
        self.accepted = accepted
        self.refusedPerAddress = refusedPerAddress
        self.closedForRoom = closedForRoom
        self.closedAtDeadline = closedAtDeadline
        self.cutOffForPartialLines = cutOffForPartialLines
        self.closedForLongLines = closedForLongLines
    }
}
