import HexKit

/// Something the daemon did or saw that its user may follow, as a service tells the event log.
/// The control socket (`hexctl watch`) and the page write each one as a `DaemonEvent`, their
/// wire form; the services never see that form.
struct Happening: Sendable, Equatable {
    let kind: EventKind
    /// The peer involved: its UUID when known.
    let peerUUID: String?
    /// The peer as the user reads it: its name, or `HOST:PORT` when it has none.
    let peer: String?
    let versionID: String?
    /// The hex, alert, send or query it is about.
    let id: String?
    let message: String?

    init(
        _ kind: EventKind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil, id: String? = nil,
        message: String? = nil
    ) {
        self.kind = kind
        self.peerUUID = peerUUID
        self.peer = peer
        self.versionID = versionID
        self.id = id
        self.message = message
    }
}
