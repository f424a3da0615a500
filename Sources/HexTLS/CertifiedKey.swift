import COpenSSL
import FoundationEssentials
import Glibc
import HexNet

/// A key pair and its self-signed certificate, kept in two files of mode 0600: made once, on first
/// start, with a certificate valid for a century, so it never needs renewing and its fingerprint
/// never changes. What an identity of any protocol is made of (`TLSIdentity`, `PersonaIdentity`).
final class CertifiedKey: @unchecked Sendable {
    // Unchecked: the key and certificate are OpenSSL objects that are only read once made, which
    // OpenSSL allows from any thread.
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// The SHA-256 of the certificate's DER.
    let fingerprint: Fingerprint

    /// The kinds of key a certificate is made for.
    enum Algorithm: Sendable {
        /// hexd's device keys: the key derives the device ID, and signs beacons.
        case ed25519
        /// What the LocalSend apps make and surely accept (RSA-2048, SHA-256 signatures).
        case rsa2048
        /// What the KDE Connect apps make since 2024 (EC P-256, SHA-512 signatures), and accept
        /// back to 22.12.
        case p256
    }

    /// Whom a new certificate names, as subject and issuer (it is self-signed).
    struct Subject: Sendable {
        var commonName: String
        var organization: String?
        var organizationalUnit: String?

        init(commonName: String, organization: String? = nil, organizationalUnit: String? = nil) {
            self.commonName = commonName
            self.organization = organization
            self.organizationalUnit = organizationalUnit
        }
    }

    /// Takes `key` and `certificate` (owned from here on).
    private init(key: OpaquePointer, certificate: OpaquePointer) throws(TLSError) {
        guard let der = Self.der(of: certificate), let fingerprint = Fingerprint(certificateDER: der) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw TLSError.openSSL("read the certificate")
        }
        self.key = key
        self.certificate = certificate
        self.fingerprint = fingerprint
    }

    deinit {
        EVP_PKEY_free(key)
        X509_free(certificate)
    }

    /// Reads the key and certificate from their two files, or makes new ones there when neither
    /// exists.
    ///
    /// The key is written first, each file whole or not at all: a start cut short between the two
    /// leaves a key without its certificate, and the next start makes the certificate for that key
    /// (the key is the identity; nobody can have pinned a certificate never written).
    /// - Parameters:
    ///   - subject: whom a new certificate names (informative for hexd peers and LocalSend, which
    ///     trust the fingerprint; KDE Connect takes the device ID from the common name).
    ///   - label: what the key is to the user, in errors (`device`, `LocalSend`).
    /// - Returns: the key, and whether it was made (or completed) now.
    /// - Throws: `TLSError` when the files cannot be read or written, or do not hold a matching key
    ///   and certificate (a certificate without its key is refused: a new key would silently be a
    ///   new identity to every peer).
    static func loadOrCreate(
        keyPath: String, certificatePath: String, subject: Subject, algorithm: Algorithm, label: String
    ) throws(TLSError) -> (CertifiedKey, created: Bool) {
        let keyText = try readPrivate(keyPath)
        let certificateText = try readPrivate(certificatePath)
        switch (keyText, certificateText) {
        case (let keyText?, let certificateText?):
            return (
                try parse(
                    key: keyText, certificate: certificateText, keyPath: keyPath, certificatePath: certificatePath,
                    label: label),
                false
            )
        case (nil, nil):
            let made = try generate(subject: subject, algorithm: algorithm)
            // The key first: a certificate without its key would be useless.
            try writePrivate(
                try made.pem(writing: { PEM_write_bio_PrivateKey($0, made.key, nil, nil, 0, nil, nil) }), to: keyPath)
            try writePrivate(try made.pem(writing: { PEM_write_bio_X509($0, made.certificate) }), to: certificatePath)
            return (made, true)
        case (nil, _?):
            throw TLSError(
                "read the \(label) key",
                reason: "\(certificatePath) exists but \(keyPath) does not; restore the key, "
                    + "or remove both files to make a new identity "
                    + "(peers that pinned the old one must then reset their trust)"
            )
        case (let keyText?, nil):
            guard let key = withMemoryBIO(keyText, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
                throw .openSSL("read the \(label) key \(keyPath)")
            }
            let made = try certify(key, subject: subject)
            try writePrivate(try made.pem(writing: { PEM_write_bio_X509($0, made.certificate) }), to: certificatePath)
            return (made, true)
        }
    }

    /// A new key of `algorithm` and a self-signed certificate for it.
    static func generate(subject: Subject, algorithm: Algorithm) throws(TLSError) -> CertifiedKey {
        guard let key = makeKey(algorithm) else { throw .openSSL("make a key") }
        return try certify(key, subject: subject)
    }

    private static func makeKey(_ algorithm: Algorithm) -> OpaquePointer? {
        let type: Int32
        switch algorithm {
        case .p256: return hexd_generate_p256_key()
        case .ed25519: type = HEXD_EVP_PKEY_ED25519
        case .rsa2048: type = HEXD_EVP_PKEY_RSA
        }
        guard let context = EVP_PKEY_CTX_new_id(type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            algorithm != .rsa2048 || EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2_048) == 1,
            EVP_PKEY_keygen(context, &generated) == 1
        else { return nil }
        return generated
    }

    /// `key` (owned from here on) with a new self-signed certificate.
    private static func certify(_ key: OpaquePointer, subject: Subject) throws(TLSError) -> CertifiedKey {
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("make a certificate")
        }
        guard sign(certificate, with: key, subject: subject) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .openSSL("make a certificate")
        }
        return try CertifiedKey(key: key, certificate: certificate)
    }

    /// Fills in a version 3 certificate (a random serial, valid from a day ago (a year for EC) for 36,500 days,
    /// subject and issuer `subject`) and signs it with `key`.
    private static func sign(_ certificate: OpaquePointer, with key: OpaquePointer, subject: Subject) -> Bool {
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { return false }
        serial[0] &= 0x7F  // a positive number
        guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else { return false }
        defer { BN_free(number) }
        guard let name = X509_get_subject_name(certificate) else { return false }
        let entries = [
            ("O", subject.organization), ("OU", subject.organizationalUnit), ("CN", subject.commonName),
        ]
        for case (let field, let value?) in entries {
            guard X509_NAME_add_entry_by_txt(name, field, HEXD_MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                return false
            }
        }
        // Ed25519 signs without a separate digest; RSA with SHA-256, EC with SHA-512 (as KDE's).
        let digest: OpaquePointer? =
            switch EVP_PKEY_get_id(key) {
            case HEXD_EVP_PKEY_ED25519: nil
            case HEXD_EVP_PKEY_EC: EVP_sha512()
            default: EVP_sha256()
            }
        return X509_set_version(certificate, 2) == 1
            && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
            // Back, for clocks that disagree: a day; a year for KDE Connect's kind, whose apps refuse
            // a certificate not yet valid, before pairing too (and date theirs so).
            && X509_gmtime_adj(
                X509_getm_notBefore(certificate), EVP_PKEY_get_id(key) == HEXD_EVP_PKEY_EC ? -31_536_000 : -86_400)
                != nil
            && X509_time_adj_ex(X509_getm_notAfter(certificate), 36_500, 0, nil) != nil
            && X509_set_pubkey(certificate, key) == 1
            && X509_set_issuer_name(certificate, name) == 1
            && X509_sign(certificate, key, digest) > 0
    }

    private static func parse(
        key keyText: [UInt8], certificate certificateText: [UInt8], keyPath: String, certificatePath: String,
        label: String
    ) throws(TLSError) -> CertifiedKey {
        guard let key = withMemoryBIO(keyText, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw .openSSL("read the \(label) key \(keyPath)")
        }
        guard let certificate = withMemoryBIO(certificateText, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            EVP_PKEY_free(key)
            throw .openSSL("read the \(label) certificate \(certificatePath)")
        }
        guard X509_check_private_key(certificate, key) == 1 else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw TLSError(
                "read the \(label) identity",
                reason: "\(certificatePath) is not the certificate of the key in \(keyPath)"
            )
        }
        return try CertifiedKey(key: key, certificate: certificate)
    }

    /// The certificate as DER.
    static func der(of certificate: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(certificate, &cursor)
        }
        return written == length ? bytes : nil
    }

    /// What `write` puts into a memory BIO, as bytes.
    private func pem(writing write: (OpaquePointer) -> Int32) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("write PEM") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw .openSSL("write PEM") }
        var bytes = [UInt8](repeating: 0, count: hexd_bio_pending(bio))
        let read = BIO_read(bio, &bytes, Int32(bytes.count))
        guard read == bytes.count else { throw .openSSL("write PEM") }
        return bytes
    }

    private static func withMemoryBIO(_ bytes: [UInt8], _ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    private static func readPrivate(_ path: String) throws(TLSError) -> [UInt8]? {
        do {
            return try PrivateFile.read(path)
        } catch {
            throw TLSError(error.operation, reason: error.reason)
        }
    }

    private static func writePrivate(_ bytes: [UInt8], to path: String) throws(TLSError) {
        do {
            try PrivateFile.write(bytes, to: path)
        } catch {
            throw TLSError(error.operation, reason: error.reason)
        }
    }
}
