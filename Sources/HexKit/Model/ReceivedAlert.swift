/// An Alert a peer sent, as kept: a message for the user, from the device ID its TLS connection
/// proved (an Alert names no sender of its own), or from an address over plaintext.
public struct ReceivedAlert: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    public var message: String
    /// The device ID the connection's key derives (uppercase); nil over plaintext.
    public var senderID: String?
    /// The IP address it came from.
    public var address: String
    /// When it was received.
    public var timestamp: Date

    public init(id: UUID = .random(), message: String, senderID: String?, address: String, timestamp: Date) {
        self.id = id
        self.message = message
        self.senderID = senderID
        self.address = address
        self.timestamp = timestamp
    }

    /// What it counts against the inbox's budgets: its strings' UTF-8 bytes and a row's cost,
    /// as `Hex.storedBytes` counts a hex.
    public var storedBytes: Int {
        Hex.bytesPerHexRow + message.utf8.count + (senderID?.utf8.count ?? 0) + address.utf8.count
    }
}
