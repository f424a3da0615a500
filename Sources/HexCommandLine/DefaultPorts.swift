/// The ports hexd uses unless told otherwise (`hexd --port`, `--discovery-port`): where a peer's
/// address written without a port points.
public enum DefaultPorts {
    /// TCP, for envelopes.
    public static let envelopes: UInt16 = 18521
    /// UDP, for discovery beacons.
    public static let discovery: UInt16 = 18520
}
