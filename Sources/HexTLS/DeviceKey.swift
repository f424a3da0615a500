import COpenSSL
import FoundationEssentials

/// A device's public key, and the device ID it derives (Protocol.md, section 12.1): only the
/// holder of the private key can speak for that ID, in a TLS handshake or a signed beacon.
///
/// The key travels as its SubjectPublicKeyInfo (DER), the form every TLS stack can print from a
/// certificate. Only Ed25519 keys are taken: hexd makes no other kind, and one kind means one
/// signature check a peer in another language must get right.
public final class DeviceKey: @unchecked Sendable, Equatable {
    // Unchecked: the EVP_PKEY is only read once made, which OpenSSL allows from any thread.
    private let key: OpaquePointer
    /// The SubjectPublicKeyInfo, DER: 44 bytes for Ed25519.
    public let subjectPublicKeyInfo: [UInt8]
    /// The device ID this key derives: a version 8 UUID (see `deviceID(of:)`).
    public let deviceID: UUID

    /// The longest SubjectPublicKeyInfo read; an Ed25519 one is 44 bytes.
    public static let maximumEncodedSize = 128
    /// An Ed25519 signature's length.
    public static let signatureSize = 64
    /// What every Ed25519 SubjectPublicKeyInfo begins with (RFC 8410): a SEQUENCE of the
    /// algorithm (OID 1.3.101.112) and a BIT STRING of the 32 key bytes that follow.
    static let ed25519Prefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// Reads a SubjectPublicKeyInfo; nil unless it is a well-formed Ed25519 public key.
    ///
    /// Read by its fixed layout rather than by OpenSSL's decoders, which cost a receiver of
    /// signed beacons over 200 µs a beacon (`hexbench identity`).
    public convenience init?(subjectPublicKeyInfo der: [UInt8]) {
        guard der.count == Self.ed25519Prefix.count + 32, der.starts(with: Self.ed25519Prefix) else { return nil }
        let raw = Array(der.dropFirst(Self.ed25519Prefix.count))
        guard let parsed = EVP_PKEY_new_raw_public_key(HEXD_EVP_PKEY_ED25519, nil, raw, raw.count) else {
            ERR_clear_error()
            return nil
        }
        self.init(owning: parsed, raw: raw)
    }

    /// The key of a SubjectPublicKeyInfo in hex (a beacon's `key` field, a persona claim's); nil
    /// unless it is one.
    public convenience init?(hex: String) {
        guard let der = Fingerprint.bytes(hex: hex, maximumCount: Self.maximumEncodedSize) else { return nil }
        self.init(subjectPublicKeyInfo: der)
    }

    /// Takes ownership of `key`, an Ed25519 key whose 32 public bytes are `raw`; nil (the key freed)
    /// when libcrypto cannot hash.
    private init?(owning key: OpaquePointer, raw: [UInt8]) {
        let der = Self.ed25519Prefix + raw
        guard let deviceID = Self.deviceID(of: der) else {
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
        subjectPublicKeyInfo = der
        self.deviceID = deviceID
    }

    deinit { EVP_PKEY_free(key) }

    public static func == (left: DeviceKey, right: DeviceKey) -> Bool {
        left.subjectPublicKeyInfo == right.subjectPublicKeyInfo
    }

    /// The device ID of a key given as its SubjectPublicKeyInfo: the first 16 bytes of its
    /// SHA-256, with the version (8) and variant (10) bits of RFC 9562 set. Nil only when
    /// libcrypto cannot hash.
    public static func deviceID(of subjectPublicKeyInfo: [UInt8]) -> UUID? {
        guard var bytes = SHA256.hash(subjectPublicKeyInfo)?.prefix(16).map({ $0 }) else { return nil }
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == Self.signatureSize, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        // Ed25519 hashes the message itself: no digest is named.
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let verified = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        ERR_clear_error()
        return verified
    }

    /// The key of a certificate; nil unless it holds an Ed25519 key.
    static func of(certificate: OpaquePointer) -> DeviceKey? {
        guard let key = X509_get_pubkey(certificate) else {
            ERR_clear_error()
            return nil
        }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        guard EVP_PKEY_get_id(key) == HEXD_EVP_PKEY_ED25519,
            EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32
        else {
            EVP_PKEY_free(key)
            ERR_clear_error()
            return nil
        }
        return DeviceKey(owning: key, raw: raw)
    }
}
