/// How the sender of a received hex was known.
public enum SenderTrust: String, Sendable, Hashable, Codable {
    /// Over TLS, by a key the user confirmed with a verification code (`hexctl pair`).
    case paired
    /// Over TLS, by the key first seen with this peer UUID (trust on first use, as SSH does).
    case pinned
    /// Over TLS, by a key met for the first time: this very hex pinned it. Shown apart from a
    /// key pinned long ago, since nothing but its own word vouches for the name it gives.
    case new
    /// Over plain TCP from a legacy peer: the sender is only what the envelope says.
    case plaintext
}

/// A peer UUID bound to the key its device proves (Protocol.md, section 12).
public struct PeerPin: Sendable, Hashable, Codable {
    /// The peer UUID, uppercase.
    public var peerUUID: String
    /// The SHA-256 of its certificate, 64 lowercase hex digits.
    public var fingerprint: String
    /// `.pinned` on first use, `.paired` once confirmed; never `.plaintext` or `.new`.
    public var trust: SenderTrust

    public init(peerUUID: String, fingerprint: String, trust: SenderTrust) {
        self.peerUUID = peerUUID.uppercased()
        self.fingerprint = fingerprint.lowercased()
        self.trust = trust
    }
}

/// What the connection an envelope came on proves about its sender.
public enum SenderProof: Sendable, Hashable {
    /// A TLS handshake proved a key: the certificate's fingerprint (64 lowercase hex digits) and
    /// the device ID the key derives (uppercase; Protocol.md, section 12.1), the one UUID it may
    /// speak for.
    case key(fingerprint: String, deviceID: String)
    /// Plain TCP: nothing.
    case none

    /// The device ID the key proved; nil over plaintext.
    public var deviceID: String? {
        if case .key(_, let deviceID) = self { return deviceID }
        return nil
    }
}
