/// Which protocol a peer speaks: hexd's own (the original app's envelopes, over TLS between
/// key-derived IDs), or another one hexd speaks to reach the devices people already own.
public enum PeerKind: String, Sendable, Codable, CaseIterable {
    case hexd
    /// A LocalSend app (or another program speaking LocalSend's protocol), known by the
    /// fingerprint of its certificate.
    case localsend
}
