import HexKit

/// A peer this daemon has seen, as remembered across restarts.
public struct KnownPeer: Sendable, Hashable, Codable {
    /// The peer's stable UUID (uppercase).
    public var uuid: String
    public var name: String
    /// The `versionID` the peer announced.
    public var versionID: String
    /// Where it was last reached, as `HOST:PORT`.
    public var address: String
    public var firstSeen: Date
    public var lastSeen: Date

    public init(uuid: String, name: String, versionID: String, address: String, firstSeen: Date, lastSeen: Date) {
        self.uuid = uuid
        self.name = name
        self.versionID = versionID
        self.address = address
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}
