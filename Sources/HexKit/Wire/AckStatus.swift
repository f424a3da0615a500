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
}
