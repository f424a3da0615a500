/// A link as it travels on the wire. Every field is optional: what a peer left out stays nil here
/// and gets its default only when `HexManager` turns the link into a stored `Link`.
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

    /// Tolerant: unknown keys are ignored; a missing, null or wrong-typed field is nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = container.lenientString(forKey: .url)
        linkDescription = container.lenientString(forKey: .linkDescription)
        service = container.lenientString(forKey: .service).map(Service.init(rawValue:))
    }

    /// Fields that are nil are left out, as the original app did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(url, forKey: .url)
        try container.encodeIfPresent(linkDescription, forKey: .linkDescription)
        try container.encodeIfPresent(service, forKey: .service)
    }
}
