/// What a listener's budgets did since the daemon started: the daemon's own count, which `status`
/// turns into the control socket's `ConnectionCounts` (whose newer fields are optional for older daemons).
struct ConnectionTally: Sendable, Equatable {
    /// Peer connections open now.
    var open = 0
    /// Connections accepted in all.
    var accepted = 0
    /// Newcomers closed at once: their address had `--max-connections-per-address` open.
    var refusedPerAddress = 0
    /// Connections closed to make room past `--max-connections`.
    var closedForRoom = 0
    /// Connections closed at a deadline (`--idle-timeout`, `--line-grace`, `--line-min-rate`).
    var closedAtDeadline = 0
    /// Connections cut off because unfinished lines together held more than `--partial-line-budget`.
    var cutOffForPartialLines = 0
    /// Connections closed after a line longer than `--max-line`.
    var closedForLongLines = 0
    /// Connections closed in their TLS handshake to make room past the cap on handshakes under way.
    var closedInHandshake = 0
    /// TLS handshakes completed with peers that connected.
    var tlsHandshakes = 0
    /// Of those, the ones that resumed a session of an earlier connection.
    var resumedHandshakes = 0
}
