/// Which protocol a peer speaks: hexd's own (the original app's envelopes, over TLS between
/// key-derived IDs), or another one hexd speaks to reach the devices people already own.
public enum PeerKind: String, Sendable, Codable, CaseIterable {
    case hexd
    /// A LocalSend app (or another program speaking LocalSend's protocol), known by the
    /// fingerprint of its certificate.
    case localsend
}

extension PeerKind {
    /// What a LocalSend device's ID in hexd starts with; its certificate's fingerprint follows.
    public static let localSendPrefix = "localsend:"

    /// The ID a LocalSend device goes by in hexd (its inbox, outbox, blocks, events): `localsend:`
    /// and its certificate's fingerprint in upper case. Nil unless `fingerprint` is 64 hex digits.
    public static func localSendID(fingerprint: String) -> String? {
        HexDigits.isHex(fingerprint, count: 64) ? localSendPrefix + fingerprint.uppercased() : nil
    }
}

extension String {
    /// The text as a peer ID in the one spelling hexd keeps: a UUID in upper case, or a LocalSend
    /// device's ID (`PeerKind.localSendID`); nil for anything else.
    public var canonicalPeerID: String? {
        if let uuid = canonicalUUID { return uuid }
        let text = trimmed
        guard text.lowercased().hasPrefix(PeerKind.localSendPrefix) else { return nil }
        return PeerKind.localSendID(fingerprint: String(text.dropFirst(PeerKind.localSendPrefix.count)))
    }

    /// Whether the text is a LocalSend device's ID, which its certificate proves (as a key-derived
    /// ID its key does): plaintext never speaks for it.
    public var isLocalSendID: Bool { hasPrefix(PeerKind.localSendPrefix) && canonicalPeerID == self }
}
