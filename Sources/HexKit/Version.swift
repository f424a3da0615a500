/// The version of this hexd build, sent as `versionID` in every envelope it writes.
public enum HexdVersion {
    public static let current = "2.0.0"
}
