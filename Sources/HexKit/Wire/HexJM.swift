/// A hex as it travels on the wire (the `jmObject` of a Store). Every field is optional; the
/// stored-only fields (UUID, location, timestamp) are never carried.
///
/// From a peer it is read by the tolerance rules (`EnvelopeReader`); its `Codable` form is strict
/// and serves the control socket, where hexctl is the writer.
public struct HexJM: Sendable, Hashable, Codable {
    public var senderUUID: String?
    public var senderName: String?
    public var hexDescription: String?
    public var hexColor: String?
    public var links: [LinkJM]?

    public init(
        senderUUID: String? = nil, senderName: String? = nil, hexDescription: String? = nil,
        hexColor: String? = nil, links: [LinkJM]? = nil
    ) {
        self.senderUUID = senderUUID
        self.senderName = senderName
        self.hexDescription = hexDescription
        self.hexColor = hexColor
        self.links = links
    }

    private enum CodingKeys: String, CodingKey {
        case senderUUID, senderName, hexDescription, hexColor, links
    }

    /// Fields that are nil are left out, as the original app did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(senderUUID, forKey: .senderUUID)
        try container.encodeIfPresent(senderName, forKey: .senderName)
        try container.encodeIfPresent(hexDescription, forKey: .hexDescription)
        try container.encodeIfPresent(hexColor, forKey: .hexColor)
        try container.encodeIfPresent(links, forKey: .links)
    }
}
