import COpenSSL
import FoundationEssentials

/// This device's key pair and self-signed certificate: what it proves in every TLS handshake
/// with hexd peers.
///
/// Made once, on first start (an Ed25519 key, whose public half derives the device ID; see
/// `CertifiedKey`), and kept in two files of mode 0600.
public final class TLSIdentity: Sendable {
    let certified: CertifiedKey
    /// The public half of the key, which derives this device's ID.
    public let publicKey: DeviceKey

    private init(_ certified: CertifiedKey) throws(TLSError) {
        guard let publicKey = DeviceKey.of(certificate: certified.certificate) else {
            throw TLSError.openSSL("read the certificate's Ed25519 key")
        }
        self.certified = certified
        self.publicKey = publicKey
    }

    public var fingerprint: Fingerprint { certified.fingerprint }
    var key: OpaquePointer { certified.key }
    var certificate: OpaquePointer { certified.certificate }

    /// The ID this device goes by: the one its key derives.
    public var deviceID: UUID { publicKey.deviceID }

    /// The key's Ed25519 signature of `message` (64 bytes); nil only when libcrypto fails.
    public func sign(_ message: [UInt8]) -> [UInt8]? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: DeviceKey.signatureSize)
        var length = signature.count
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
            EVP_DigestSign(context, &signature, &length, message, message.count) == 1,
            length == DeviceKey.signatureSize
        else {
            ERR_clear_error()
            return nil
        }
        return signature
    }

    /// Reads the identity from its two files, or makes a new one there when neither exists (see
    /// `CertifiedKey.loadOrCreate`).
    /// - Parameter commonName: the new certificate's subject (informative; peers trust the
    ///   fingerprint, not the name).
    /// - Returns: the identity, and whether it was made (or completed) now.
    /// - Throws: `TLSError` when the files cannot be read or written, do not hold a matching key
    ///   and certificate, or hold a key that is not Ed25519.
    public static func loadOrCreate(keyPath: String, certificatePath: String, commonName: String) throws(TLSError) -> (
        TLSIdentity, created: Bool
    ) {
        let (certified, created) = try CertifiedKey.loadOrCreate(
            keyPath: keyPath, certificatePath: certificatePath, subject: .init(commonName: commonName),
            algorithm: .ed25519,
            label: "device")
        return (try TLSIdentity(certified), created)
    }
}
