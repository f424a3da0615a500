import HexKit

extension ForeignMessage {
    /// What KDE Connect devices send: hexes in KDE's blue.
    public static let kdeConnect = ForeignMessage(color: "#1D99F3")
}
