import COpenSSL

/// AES-256-CBC with PKCS#7 padding, the cipher of Quick Share's secure channel.
public enum AESCBC {
    public static func encrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) throws(QuickShareError) -> [UInt8] {
        try run(plaintext, key: key, iv: iv, encrypting: true)
    }

    /// - Throws: `QuickShareError` when the padding is wrong, which a body that was not sealed with `key` gives.
    public static func decrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws(QuickShareError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw QuickShareError("a body of \(ciphertext.count) bytes is not whole AES blocks")
        }
        return try run(ciphertext, key: key, iv: iv, encrypting: false)
    }

    private static func run(_ input: [UInt8], key: [UInt8], iv: [UInt8], encrypting: Bool) throws(QuickShareError)
        -> [UInt8]
    {
        guard key.count == 32, iv.count == 16 else {
            throw QuickShareError("AES-256-CBC needs a 32-byte key and a 16-byte IV")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw QuickShareError("libcrypto could not make a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, key, iv, encrypting ? 1 : 0) == 1 else {
            throw QuickShareError("libcrypto could not start AES-256-CBC")
        }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var finished: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { output in
            guard let base = output.baseAddress,
                EVP_CipherUpdate(context, base, &written, input, Int32(clamping: input.count)) == 1
            else { return false }
            return EVP_CipherFinal_ex(context, base + Int(written), &finished) == 1
        }
        guard ok else { throw QuickShareError(encrypting ? "AES-256-CBC failed" : "a body does not decrypt") }
        return Array(output.prefix(Int(written) + Int(finished)))
    }
}
