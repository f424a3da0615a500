/// A link as it travels on the wire. Every field is optional: what a peer left out stays nil here
/// and gets its default only when `HexManager` turns the link into a stored `Link`.
///
/// From a peer it is read by the tolerance rules (`EnvelopeReader`); its `Codable` form is strict
/// and serves the control socket, where hexctl is the writer.
public struct LinkJM: Sendable, Hashable, Codable {
    public var url: String?
    public var linkDescription: String?
    public var service: Service?

    public init(url: String? = nil, linkDescription: String? = nil, service: Service? = nil) {
        self.url = url
        self.linkDescription = linkDescription
        self.service = service
    }

    private enum CodingKeys: String, CodingKey {
        case url, linkDescription, service
    }

    /// Fields that are nil are left out, as the original app did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(url, forKey: .url)
        try container.encodeIfPresent(linkDescription, forKey: .linkDescription)
        try container.encodeIfPresent(service, forKey: .service)
    }
}
