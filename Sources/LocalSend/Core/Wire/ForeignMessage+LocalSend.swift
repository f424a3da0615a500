import HexKit

extension ForeignMessage {
    /// What LocalSend devices send: teal hexes.
    public static let localSend = ForeignMessage(color: "#0EA5A4")
}
