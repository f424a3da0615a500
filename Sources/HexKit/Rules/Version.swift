/// The version of this hexd build, sent as `versionID` in every envelope it writes.
public enum HexdVersion {
    public static let current = "2.0.0"

    /// Whether a peer announcing `versionID` must be sent only what the original app understood
    /// (Protocol.md, section 7): true unless the version starts with a major number of 2 or more.
    /// A version that cannot be read counts as legacy, which is the safe side.
    public static func isLegacy(_ versionID: String) -> Bool {
        guard let major = Int(versionID.prefix { $0.isASCII && $0.isNumber }) else { return true }
        return major < 2
    }
}
