import HexCommandLine
import HexEngine
import HexNet

/// The budgets of peer connections (Protocol.md, "Budgets"): how long a connection may wait
/// before a line and take to send one, and how many connections and unfinished bytes it may
/// hold. Each option is declared once, in `declared`.
public struct InboundSettings: Sendable, Hashable {
    /// How long a TCP connection may wait before it begins a line (a deadline, not restarted by
    /// blank lines).
    public var idleTimeout: Duration = .seconds(60)
    /// Once a line has begun it must arrive within this, plus one second per `lineMinimumRate` bytes.
    public var lineGrace: Duration = .seconds(10)
    public var lineMinimumRate = 16_384
    /// Peer connections served at once; past it, the stalest is closed for the newcomer.
    public var maximumConnections = 4_096
    /// Peer connections from one address at once; past it, newcomers are refused.
    public var maximumConnectionsPerAddress = 16
    /// Bytes of begun lines all peer connections together may hold; past it, the largest holders
    /// are cut off.
    public var partialLineBudget = 64 << 20
    /// TLS handshakes a second strangers' connections get in all (`HandshakeAdmission`).
    public var strangerHandshakes = 100

    public init() {}

    /// The budgets `strangerHandshakes` makes (`HandshakeAdmission.Budgets`).
    var handshakeBudgets: HandshakeAdmission<IPAddress>.Budgets { .init(strangerHandshakes: strangerHandshakes) }

    public static let declared: [Setting<InboundSettings>] = [
        .seconds(
            "idle-timeout", help: "Close a TCP connection that does not begin a line within this. Default: 60.",
            \.idleTimeout),
        .seconds(
            "line-grace",
            help: "Once a line has begun, it must end within this plus one second per --line-min-rate bytes. "
                + "Default: 10.",
            \.lineGrace),
        .count(
            "line-min-rate", value: "bytes", in: 1...(1 << 30),
            help: "The slowest a line may arrive on average, in bytes per second. Default: 16384.",
            \.lineMinimumRate),
        .count(
            "max-connections", in: 1...1_000_000,
            help: "Peer connections at once (lowered to what the descriptor limit allows); "
                + "past it, the one waiting longest without a line is closed. Default: 4096.",
            \.maximumConnections),
        .count(
            "max-connections-per-address", in: 1...1_000_000,
            help: "Peer connections from one address at once; past it, newcomers are refused. Default: 16.",
            \.maximumConnectionsPerAddress),
        .count(
            "partial-line-budget", value: "bytes", in: 1_024...(1 << 40),
            help: "Bytes of unfinished lines all peers together may hold; past it, the largest holders are cut "
                + "off. Default: 67108864 (64 MiB).",
            \.partialLineBudget),
        .count(
            "stranger-handshakes", value: "per-second", in: 1...1_000_000,
            help: "TLS handshakes a second that connections from strangers (addresses no paired peer, and no peer "
                + "hexd delivered to, was last seen at) get, on every listener together: one address gets a tenth "
                + "of it, one /24 or /64 half, and addresses new to hexd a tenth beside (each at least 1, each "
                + "taking bursts of 4 s of its rate); past those, a stranger's connection is reset before its "
                + "handshake. A known peer's address gets ten times it. Default: 100.",
            \.strangerHandshakes),
    ]
}
