import COpenSSL

/// The key and certificate hexd shows to the devices of another protocol (LocalSend): its own,
/// apart from the Ed25519 device identity hexd peers know it by, and of the kind those devices
/// surely accept (RSA-2048, as the LocalSend apps make). Kept in two files of mode 0600, made on
/// first start (see `CertifiedKey.loadOrCreate`).
public final class PersonaIdentity: Sendable {
    let certified: CertifiedKey

    private init(_ certified: CertifiedKey) {
        self.certified = certified
    }

    /// The SHA-256 of the certificate's DER: what the other protocol knows this device by.
    public var fingerprint: Fingerprint { certified.fingerprint }

    /// Reads the persona from its two files, or makes a new one there when neither exists.
    /// - Parameter label: what the persona is to the user, in errors (`LocalSend`).
    /// - Returns: the persona, and whether it was made (or completed) now.
    /// - Throws: `TLSError` when the files cannot be read or written, or do not hold a matching
    ///   RSA key and certificate.
    public static func loadOrCreate(
        keyPath: String, certificatePath: String, commonName: String, label: String
    ) throws(TLSError) -> (PersonaIdentity, created: Bool) {
        let (certified, created) = try CertifiedKey.loadOrCreate(
            keyPath: keyPath, certificatePath: certificatePath, commonName: commonName, algorithm: .rsa2048,
            label: label)
        guard EVP_PKEY_get_id(certified.key) == HEXD_EVP_PKEY_RSA else {
            throw TLSError("read the \(label) key", reason: "\(keyPath) holds no RSA key")
        }
        return (PersonaIdentity(certified), created)
    }
}
