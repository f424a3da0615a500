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

    /// Reads a SubjectPublicKeyInfo; nil unless it is a well-formed Ed25519 public key.
    public convenience init?(subjectPublicKeyInfo der: [UInt8]) {
        guard !der.isEmpty, der.count <= Self.maximumEncodedSize else { return nil }
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            return nil
        }
        self.init(owning: parsed)
    }

    /// Takes ownership of `key`; nil (the key freed) unless it is an Ed25519 key that encodes.
    init?(owning key: OpaquePointer) {
        guard EVP_PKEY_get_id(key) == HEXD_EVP_PKEY_ED25519, let der = Self.encode(key),
              let deviceID = Self.deviceID(of: der) else {
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
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
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
        return DeviceKey(owning: key)
    }

    private static func encode(_ key: OpaquePointer) -> [UInt8]? {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0, length <= maximumEncodedSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? bytes : nil
    }
}
