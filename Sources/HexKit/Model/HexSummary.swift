/// A stored hex without its links, as lists show it: what a list of any length can afford.
public struct HexSummary: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    public var location: HexLocation
    public var senderUUID: String
    public var senderName: String
    public var hexDescription: String
    public var hexColor: String
    public var timestamp: Date
    public var isChecked: Bool
    public var linkCount: Int
    /// How its sender was known (see `Hex.senderTrust`).
    public var senderTrust: SenderTrust?

    public init(
        id: UUID, location: HexLocation, senderUUID: String, senderName: String, hexDescription: String,
        hexColor: String,
        timestamp: Date, isChecked: Bool, linkCount: Int, senderTrust: SenderTrust? = nil
    ) {
        self.senderTrust = senderTrust
        self.id = id
        self.location = location
        self.senderUUID = senderUUID
        self.senderName = senderName
        self.hexDescription = hexDescription
        self.hexColor = hexColor
        self.timestamp = timestamp
        self.isChecked = isChecked
        self.linkCount = linkCount
    }

    /// The summary of a whole hex.
    public init(_ hex: Hex) {
        self.init(
            id: hex.id, location: hex.location, senderUUID: hex.senderUUID, senderName: hex.senderName,
            hexDescription: hex.hexDescription,
            hexColor: hex.hexColor, timestamp: hex.timestamp, isChecked: hex.isChecked, linkCount: hex.links.count,
            senderTrust: hex.senderTrust)
    }
}
