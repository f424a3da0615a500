/// What `HexManager.receive(_:)` did with an envelope from a peer.
public enum ReceiveOutcome: Sendable, Hashable {
    /// The hex was committed to the inbox.
    case stored(Hex)
    /// An envelope with the same `messageID` was stored before; nothing was stored.
    case duplicate
    /// The sender is blocked, or not one the accept policy admits; nothing was stored. `alert`
    /// is the reply text for its user ("<Name> blocked you.", as the original app said it).
    case rejected(alert: String)
    /// The connection disproves the envelope's sender (another key speaks for that peer UUID,
    /// or plaintext claims a peer known by its key); nothing was stored.
    case forged(reason: String)
    /// An Alert was kept, from the device ID its TLS connection proved (none over plaintext:
    /// an Alert names no sender).
    case alert(ReceivedAlert)
    /// The hex does not fit a budget of the inbox or the disk's free space; nothing was stored.
    /// `account` is whose share it would have counted against.
    case noRoom(StorageRefusal, account: SenderAccount)
    /// The operation or object type is one this version does not handle; nothing was done.
    case unsupported(reason: String)
    /// The envelope cannot be acted on; nothing was stored.
    case invalid(reason: String)

    /// The `status` an Ack reports for this outcome.
    public var ackStatus: AckStatus {
        switch self {
        case .stored: .stored
        case .duplicate: .duplicate
        case .rejected, .forged: .rejected
        case .alert: .received
        case .noRoom(let refusal, _): refusal.ackStatus
        case .unsupported: .unsupported
        case .invalid: .invalid
        }
    }

    /// A sentence for the human reading an Ack or a log line.
    public var explanation: String {
        switch self {
        case .stored(let hex): "stored in the inbox as \(hex.id.uppercaseText)"
        case .duplicate: "already stored; this messageID was seen before"
        case .rejected(let alert): alert
        case .alert: "alert delivered and kept"
        case .noRoom(let refusal, _): refusal.message
        case .unsupported(let reason), .invalid(let reason), .forged(let reason): reason
        }
    }
}
