import COpenSSL

/// The SHA-2 digests UKEY2 and the secure channel use, through libcrypto.
public enum Digest {
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha256(), count: 32)
    }

    public static func sha512(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha512(), count: 64)
    }

    /// HMAC-SHA256 of `bytes` under `key`; empty should libcrypto fail, which no comparison then takes
    /// (`constantTimeEqual` refuses it) and no cipher either (AES refuses a key of any length but 32).
    public static func hmacSHA256(key: [UInt8], _ bytes: some Collection<UInt8>) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = contiguous(bytes) { data in
            key.withUnsafeBufferPointer { key in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(clamping: key.count), data.baseAddress, data.count,
                    &code, &length) != nil
            }
        }
        return done && length == 32 ? code : []
    }

    /// `body` over `bytes` in place when they are contiguous (an array, or a view of one: a chunk's
    /// worth is not copied), else over a copy.
    private static func contiguous<Result>(
        _ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        if let result = bytes.withContiguousStorageIfAvailable(body) { return result }
        return Array(bytes).withUnsafeBufferPointer(body)
    }

    /// HKDF with SHA-256 (RFC 5869): extract with `salt`, expand with `info` to `count` bytes (at most 8,160).
    public static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        let pseudorandomKey = hmacSHA256(key: salt, key)
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < count, counter != 0 {
            block = hmacSHA256(key: pseudorandomKey, block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(count))
    }

    /// Whether two byte strings are equal, in time that does not depend on where they differ.
    public static func constantTimeEqual(_ one: [UInt8], _ other: [UInt8]) -> Bool {
        // Empty is never equal: an empty digest is one that failed.
        guard one.count == other.count, !one.isEmpty else { return false }
        return one.withUnsafeBytes { one in
            other.withUnsafeBytes { other in CRYPTO_memcmp(one.baseAddress, other.baseAddress, one.count) == 0 }
        }
    }

    private static func digest(_ bytes: some Collection<UInt8>, _ kind: OpaquePointer?, count: Int) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = contiguous(bytes) { data in
            EVP_Digest(data.baseAddress, data.count, &digest, &length, kind, nil)
        }
        // A SHA-2 digest cannot fail once libcrypto is loaded; an empty result would fail every comparison.
        return ok == 1 && Int(length) == count ? Array(digest.prefix(count)) : []
    }
}
