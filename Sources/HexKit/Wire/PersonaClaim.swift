import HexJSON

/// A hexd's signed word that a LocalSend or KDE Connect identity is its own persona (Protocol.md,
/// section 16.1): carried in that identity as `"hexd": {"peer", "key", "sig"}`, so that another
/// hexd neither lists nor links the persona, and meets the daemon once, as a hexd peer.
///
/// Only a claim that holds counts: `key` must derive `peer` (section 12.1) and `sig` be its
/// signature of the persona's ID (`signedMessage`). A stranger cannot make one for a hexd it is
/// not, nor for an identity of another device: a phone's identity never carries one, so a claim
/// copied into a forged identity hides that forged identity alone.
public struct PersonaClaim: Sendable, Equatable {
    /// The hexd peer's ID (a key-derived UUID, upper case).
    public var peer: String
    /// Its public key: the SubjectPublicKeyInfo (DER) of its Ed25519 key, lowercase hex.
    public var key: String
    /// The key's Ed25519 signature of `signedMessage`, 128 lowercase hex digits.
    public var signature: String

    /// The member of an identity that holds the claim.
    public static let member = "hexd"
    /// Tags the bytes a claim's signature covers, so they can never be taken for other signed bytes
    /// (a beacon's are tagged `Beacon.signatureTag`).
    public static let signatureTag = "hexd-persona/1"
    /// The longest field read: a key is 88 hex digits, a signature 128, a UUID 36.
    static let maximumFieldBytes = 256

    public init(peer: String, key: String, signature: String) {
        self.peer = peer
        self.key = key
        self.signature = signature
    }

    /// The claim an identity's `hexd` member holds; nil when it has none, or one with a field
    /// missing, of another type or longer than any a claim has.
    public init?(in object: JSONObject) {
        guard let claim = object.object(Self.member), let peer = claim.string("peer"), let key = claim.string("key"),
            let signature = claim.string("sig"),
            [peer, key, signature].allSatisfy({ $0.utf8.count <= Self.maximumFieldBytes })
        else { return nil }
        self.init(peer: peer, key: key, signature: signature)
    }

    /// The bytes a claim's signature covers: the tag, the persona's ID in hexd's spelling
    /// (`kdeconnect:` and its device ID in lower case, `localsend:` and its fingerprint in upper
    /// case: `canonicalPeerID`), and the peer's ID, each as its UTF-8 bytes after their count as two
    /// bytes, big-endian (as a beacon's fields are signed). Nil when a field is over 65,535 bytes.
    public static func signedMessage(persona: String, peer: String) -> [UInt8]? {
        SignedFields.message([signatureTag, persona, peer])
    }

    /// Writes the claim as the `hexd` member of the object being written.
    public func write(to writer: inout JSONWriter) {
        writer.key(Self.member)
        writer.beginObject()
        writer.member("peer", peer)
        writer.member("key", key)
        writer.member("sig", signature)
        writer.endObject()
    }
}
