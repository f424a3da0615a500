import COpenSSL

/// The key and certificate hexd shows to the devices of another protocol: its own for each
/// protocol, apart from the Ed25519 device identity hexd peers know it by, and of the kind those
/// devices make themselves (RSA-2048 for LocalSend; EC P-256 for KDE Connect, whose device ID is
/// the certificate's common name). Kept in two files of mode 0600, made on first start (see
/// `CertifiedKey.loadOrCreate`).
public final class PersonaIdentity: Sendable {
    let certified: CertifiedKey

    /// The kinds of key a persona is made with.
    public enum KeyKind: Sendable {
        /// RSA-2048 with SHA-256 signatures, as the LocalSend apps make.
        case rsa2048
        /// EC P-256 with SHA-512 signatures, as the KDE Connect apps make since 2024.
        case p256

        var algorithm: CertifiedKey.Algorithm { self == .rsa2048 ? .rsa2048 : .p256 }
        var keyType: Int32 { self == .rsa2048 ? HEXD_EVP_PKEY_RSA : HEXD_EVP_PKEY_EC }
    }

    private init(_ certified: CertifiedKey) {
        self.certified = certified
    }

    /// The SHA-256 of the certificate's DER: what LocalSend knows this device by.
    public var fingerprint: Fingerprint { certified.fingerprint }

    /// The certificate's common name, as written when it was made: what KDE Connect knows this
    /// device by.
    public var commonName: String? { CertificateFields.commonName(of: certified.certificate) }

    /// The public key as DER (SubjectPublicKeyInfo), which KDE Connect's verification code covers.
    public var publicKeyDER: [UInt8]? { CertificateFields.publicKeyDER(of: certified.certificate) }

    /// Reads the persona from its two files, or makes a new one there when neither exists.
    /// - Parameters:
    ///   - subject: whom a new certificate names: its common name, and its organization and unit.
    ///   - label: what the persona is to the user, in errors (`LocalSend`, `KDE Connect`).
    /// - Returns: the persona, and whether it was made (or completed) now.
    /// - Throws: `TLSError` when the files cannot be read or written, or do not hold a matching key
    ///   of `kind` and its certificate.
    public static func loadOrCreate(
        keyPath: String, certificatePath: String, kind: KeyKind = .rsa2048, commonName: String,
        organization: String? = nil, organizationalUnit: String? = nil, label: String
    ) throws(TLSError) -> (PersonaIdentity, created: Bool) {
        let subject = CertifiedKey.Subject(
            commonName: commonName, organization: organization, organizationalUnit: organizationalUnit)
        let (certified, created) = try CertifiedKey.loadOrCreate(
            keyPath: keyPath, certificatePath: certificatePath, subject: subject, algorithm: kind.algorithm,
            label: label)
        guard EVP_PKEY_get_id(certified.key) == kind.keyType else {
            throw TLSError(
                "read the \(label) key", reason: "\(keyPath) holds no \(kind == .rsa2048 ? "RSA" : "EC P-256") key")
        }
        return (PersonaIdentity(certified), created)
    }
}
