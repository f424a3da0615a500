/// How many hexes are stored where.
public struct HexCounts: Sendable, Hashable {
    public var inbox = 0
    /// Inbox hexes not yet checked.
    public var unchecked = 0
    /// My Hexlist.
    public var hexlist = 0

    public init(inbox: Int = 0, unchecked: Int = 0, hexlist: Int = 0) {
        self.inbox = inbox
        self.unchecked = unchecked
        self.hexlist = hexlist
    }
}
