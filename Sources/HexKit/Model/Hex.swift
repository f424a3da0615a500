/// A stored hex: a named, coloured bundle of links with its sender's identity.
///
/// Made by `HexManager` from a received HexJM or from the user's own input; the id, location and
/// timestamp are the receiver's own and never come from the wire.
public struct Hex: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    public var location: HexLocation
    public var senderUUID: String
    public var senderName: String
    public var hexDescription: String
    public var hexColor: String
    /// In the sender's order.
    public var links: [Link]
    /// When this hex was received or created.
    public var timestamp: Date
    /// Whether the user has looked at it. Hexes in My Hexlist are always checked.
    public var isChecked: Bool
    /// How its sender was known when it was received; nil for the user's own hexes (and hexes
    /// received before hexd knew).
    public var senderTrust: SenderTrust?

    public init(
        id: UUID = .random(), location: HexLocation, senderUUID: String, senderName: String,
        hexDescription: String, hexColor: String, links: [Link], timestamp: Date = Date(),
        isChecked: Bool, senderTrust: SenderTrust? = nil
    ) {
        self.senderTrust = senderTrust
        self.id = id
        self.location = location
        self.senderUUID = senderUUID
        self.senderName = senderName
        self.hexDescription = hexDescription
        self.hexColor = hexColor
        self.links = links
        self.timestamp = timestamp
        self.isChecked = isChecked
    }
}
