import COpenSSL

/// SHA-256 over bytes given a piece at a time (a file read in chunks), through libcrypto, which
/// uses the processor's SHA instructions where it has them.
///
/// Unchecked Sendable: it has one owner at a time (handed to the thread that reads a file, and
/// back), never two.
public final class SHA256Digest: @unchecked Sendable {
    private let context: OpaquePointer

    /// - Throws: `TLSError` when libcrypto cannot allocate.
    public init() throws(TLSError) {
        guard let context = EVP_MD_CTX_new() else { throw .openSSL("start a SHA-256 digest") }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw .openSSL("start a SHA-256 digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // Cannot fail for SHA-256 on a context that initialised.
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of `bytes`, as 64 lowercase hex digits.
    public static func hex(of bytes: [UInt8]) throws(TLSError) -> String {
        let digest = try SHA256Digest()
        digest.update(bytes)
        return try digest.finish()
    }

    /// The digest of what was given so far, as 64 lowercase hex digits; more can be given after.
    public func current() throws(TLSError) -> String {
        guard let copy = EVP_MD_CTX_new() else { throw .openSSL("copy a SHA-256 digest") }
        defer { EVP_MD_CTX_free(copy) }
        guard EVP_MD_CTX_copy_ex(copy, context) == 1 else { throw .openSSL("copy a SHA-256 digest") }
        return try Self.finish(copy)
    }

    /// The digest of everything given, as 64 lowercase hex digits. The digest cannot be updated after.
    public func finish() throws(TLSError) -> String {
        try Self.finish(context)
    }

    private static func finish(_ context: OpaquePointer) throws(TLSError) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
            throw .openSSL("finish a SHA-256 digest")
        }
        return Fingerprint.hex(Array(digest.prefix(32)))
    }
}
