/// The verification code KDE Connect shows on both devices while they pair: the person compares
/// them (kdeconnect-kde `core/pairinghandler.cpp`, 22.12's `device.cpp`).
public enum KDEConnectVerification {
    /// The first 8 hex digits, in upper case, of the SHA-256 of both public keys (DER
    /// SubjectPublicKeyInfo), the larger first by unsigned bytes, followed in protocol 8 by the
    /// request's date in decimal. 22.12 (protocol 7) shows the same digits in lower case.
    /// - Parameter timestamp: the pairing request's date (seconds since 1970), protocol 8 only.
    /// - Throws: `TLSError` when OpenSSL cannot hash.
    public static func code(ownKey: [UInt8], peerKey: [UInt8], timestamp: Int64?) throws(TLSError) -> String {
        let (first, second) = ownKey.lexicographicallyPrecedes(peerKey) ? (peerKey, ownKey) : (ownKey, peerKey)
        let digest = try SHA256Digest()
        digest.update(first)
        digest.update(second)
        if let timestamp { digest.update(Array(String(timestamp).utf8)) }
        return String(try digest.finish().prefix(8)).uppercased()
    }
}
