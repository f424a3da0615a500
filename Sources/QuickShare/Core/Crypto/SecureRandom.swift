import COpenSSL

/// Random bytes from libcrypto's generator, seeded by the kernel.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws(QuickShareError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(clamping: count)) == 1 else {
            throw QuickShareError("libcrypto gave no random bytes")
        }
        return bytes
    }
}
