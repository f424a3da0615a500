import HexKit

/// Something the daemon did or saw that its user may follow, as a service tells the event log.
/// The control socket (`hexctl watch`) and the page write each one as a `DaemonEvent`, their
/// wire form; the services never see that form.
struct Happening: Sendable, Equatable {
    /// What happened; the control protocol's `DaemonEvent.Kind` documents each.
    enum Kind: Sendable, Hashable, CaseIterable {
        case peerFound
        case peerLost
        case hexReceived
        case alertReceived
        case sendQueued
        case sendRetrying
        case sendAcked
        case sendFailed
        case queryProgress
        case queryFinished
        case peerKeyMismatch
        case pairRequested
        case paired
        case visibilityChanged
        case fileFetched
        case fetchFailed
    }

    let kind: Kind
    /// The peer involved: its UUID when known.
    let peerUUID: String?
    /// The peer as the user reads it: its name, or `HOST:PORT` when it has none.
    let peer: String?
    let versionID: String?
    /// The hex, alert, send or query it is about.
    let id: String?
    let message: String?

    init(
        _ kind: Kind, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil, id: String? = nil,
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
