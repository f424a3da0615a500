import HexKit

/// Something the daemon did or saw that its user may follow, as a service tells the event log.
/// The control socket (`hexctl watch`) and the page write each one as a `DaemonEvent`, their
/// wire form; the services never see that form.
package struct Happening: Sendable, Equatable {
    package let kind: EventKind
    /// The peer involved: its UUID when known.
    package let peerUUID: String?
    /// The peer as the user reads it: its name, or `HOST:PORT` when it has none.
    package let peer: String?
    package let versionID: String?
    /// The hex, alert, send or query it is about.
    package let id: String?
    package let message: String?

    package init(
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
