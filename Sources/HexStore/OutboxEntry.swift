import HexKit

/// A send waiting in the outbox: delivered and removed on its peer's Ack, or removed when it
/// fails for good or expires.
public struct OutboxEntry: Sendable, Hashable {
    /// What is sent.
    public enum Kind: String, Sendable, Hashable {
        case hex, alert
    }

    /// The envelope's `messageID` on every attempt (an uppercase UUID), so the receiver stores
    /// it at most once.
    public var messageID: String
    /// The peer, by its UUID: sent wherever it announces itself. Nil for an address alone.
    public var peerUUID: String?
    /// `HOST:PORT` the user typed: sent there and nowhere else. Nil for a peer by UUID.
    public var address: String?
    /// The destination as the user reads it (a peer's name, or the address).
    public var label: String
    public var kind: Kind
    /// The envelope line, as a current (2.x) peer gets it.
    public var envelope: String
    /// Sent as to a 1.x peer, whatever the peer announces (the user's `--legacy`).
    public var legacy: Bool
    public var createdAt: Date
    /// When it is given up if still undelivered.
    public var expiresAt: Date
    /// Attempts made so far.
    public var attempts: Int
    public var nextAttemptAt: Date
    /// Why the last attempt failed.
    public var lastError: String?

    public init(
        messageID: String, peerUUID: String?, address: String?, label: String, kind: Kind, envelope: String,
        legacy: Bool,
        createdAt: Date, expiresAt: Date, attempts: Int = 0, nextAttemptAt: Date, lastError: String? = nil
    ) {
        self.messageID = messageID
        self.peerUUID = peerUUID
        self.address = address
        self.label = label
        self.kind = kind
        self.envelope = envelope
        self.legacy = legacy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

/// How full the outbox is.
public struct OutboxUsage: Sendable, Hashable {
    public var entries: Int
    /// Bytes of their envelopes.
    public var bytes: Int

    public init(entries: Int, bytes: Int) {
        self.entries = entries
        self.bytes = bytes
    }
}
