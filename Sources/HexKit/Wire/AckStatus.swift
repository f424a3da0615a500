/// The `status` of an `Ack` envelope: what the receiver did with the envelope whose `messageID`
/// the Ack repeats. A status this version does not know is kept as received.
public struct AckStatus: WireName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The hex was committed to the receiver's database (the Ack is sent after the commit).
    public static let stored: Self = "stored"
    /// An envelope with this `messageID` was stored before; nothing was stored again.
    public static let duplicate: Self = "duplicate"
    /// The receiver refused it (the sender is blocked).
    public static let rejected: Self = "rejected"
    /// The receiver does not know the operation or object type; nothing was done.
    public static let unsupported: Self = "unsupported"
    /// The envelope was not usable (not JSON, required keys missing, a Store without a hex).
    public static let invalid: Self = "invalid"
    /// An Alert's message was delivered, and kept.
    public static let received: Self = "received"
    /// The receiver could not store it (its database failed); nothing was stored: try again later.
    public static let failed: Self = "failed"

    /// Answers a Fetch: the file's bytes follow the Ack's line (`FileRangeJM` says how many).
    public static let sending: Self = "sending"
    /// Answers a Fetch: this device granted no such file to the key that asked (or never did).
    public static let notFound: Self = "notFound"
    /// Answers a Fetch: the grant's time ran out, or its owner revoked it.
    public static let expired: Self = "expired"
    public static let revoked: Self = "revoked"
    /// Answers a Fetch: the file is no longer the one granted (its bytes changed), or it was
    /// moved or deleted.
    public static let changed: Self = "changed"
    public static let missing: Self = "missing"
    /// Answers a Fetch: the bytes before the offset asked for are not the file's; fetch from 0.
    public static let mismatch: Self = "mismatch"
    /// Answers a Fetch: too many files are being served now; try again later.
    public static let busy: Self = "busy"
}
