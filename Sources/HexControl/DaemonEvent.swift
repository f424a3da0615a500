import HexKit

/// Something that happened in the daemon, as `watch` streams it. `seq` increases by one per
/// event for the daemon's lifetime, so a watcher can resume after the last one it saw.
public struct DaemonEvent: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case peerFound, peerLost, hexReceived, alertReceived
        /// A send was committed to the outbox (`id`: its messageID; `message`: when it expires).
        case sendQueued
        /// An attempt at a queued send failed in a way worth retrying (`message`: the attempt, why, and when the
        /// next is).
        case sendRetrying
        /// The peer took a send (`message`: the Ack's status, or "sent" for a legacy peer); it left the outbox.
        case sendAcked
        /// A send ended undelivered (`message`: the refusal, "expired: …" or "cancelled"); it left the outbox.
        case sendFailed
        /// A share query got one more link (`message`: "answered/total").
        case queryProgress
        /// A share query ended (`message`: "delivered", "cancelled" or why it failed).
        case queryFinished
        /// A beacon claimed a peer's UUID with a key other than the one pinned to it (`message`
        /// says where from and which keys); it is not used for sending.
        case peerKeyMismatch
        /// A peer asked to pair (`message`: the verification code to compare).
        case pairRequested
        /// Pairing with a peer completed on this side (`message`: the verification code).
        case paired
        /// The daemon hid or showed itself (`message`: `visible`, `hidden`, or until when it is visible).
        case visibilityChanged
        /// A shared file was fetched whole into the downloads folder (`id`: the hex's id;
        /// `message`: the path it landed at).
        case fileFetched
        /// A fetch stopped (`id`: the hex's id; `message`: the file and why; a partial file is kept).
        case fetchFailed
    }

    public var seq: UInt64
    public var kind: Kind
    /// When it happened (ISO 8601 on the wire).
    public var time: Date
    /// The peer involved: its UUID when known.
    public var peerUUID: String?
    /// The peer's name, or `HOST:PORT` when it has none.
    public var peer: String?
    public var versionID: String?
    /// hexReceived: the stored hex's id; alertReceived: the kept alert's id; send*: the messageID;
    /// query*: the query id.
    public var id: String?
    /// alertReceived: the alert; sendFailed: why; sendAcked: the Ack's status; hexReceived: its description.
    public var message: String?

    public init(
        seq: UInt64, kind: Kind, time: Date, peerUUID: String? = nil, peer: String? = nil, versionID: String? = nil,
        id: String? = nil, message: String? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.time = time
        self.peerUUID = peerUUID
        self.peer = peer
        self.versionID = versionID
        self.id = id
        self.message = message
    }
}
