import HexKit

extension ForeignMessage {
    /// What Quick Share devices send: hexes in Google's blue, of Quick Share's icon.
    static let quickShare = ForeignMessage(color: "#4285F4")
}
