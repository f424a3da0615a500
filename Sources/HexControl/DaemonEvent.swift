import HexKit

/// Something that happened in the daemon, as `watch` streams it. `seq` increases by one per
/// event for the daemon's lifetime, so a watcher can resume after the last one it saw.
public struct DaemonEvent: Sendable, Codable, Equatable {
    /// What happened: the daemon's own vocabulary, written as its raw value.
    public typealias Kind = EventKind

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
