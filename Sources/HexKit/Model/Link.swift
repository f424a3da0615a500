/// A stored link: a URL with a description and the service it points into.
public struct Link: Sendable, Hashable, Codable, Identifiable {
    public var id: UUID
    public var url: String
    public var linkDescription: String
    /// Kept as received, even when this version does not know the service.
    public var service: Service

    public init(id: UUID = .random(), url: String, linkDescription: String, service: Service) {
        self.id = id
        self.url = url
        self.linkDescription = linkDescription
        self.service = service
    }
}
