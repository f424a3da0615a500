/// Where a stored hex lives. Local only: never sent on the wire.
public enum HexLocation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Received from a peer; newest first; each hex starts unchecked.
    case inbox
    /// The user's own hexes, in the order the user chose.
    case myHexlist
}
