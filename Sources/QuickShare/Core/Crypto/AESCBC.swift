import COpenSSL

/// AES-256-CBC with PKCS#7 padding, the cipher of Quick Share's secure channel.
public enum AESCBC {
    public static func encrypt(_ plaintext: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8]) throws(QuickShareError)
        -> [UInt8]
    {
        try run(plaintext, key: key, iv: iv, encrypting: true)
    }

    /// - Throws: `QuickShareError` when the padding is wrong, which a body that was not sealed with `key` gives.
    public static func decrypt(_ ciphertext: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8]) throws(QuickShareError)
        -> [UInt8]
    {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw QuickShareError("a body of \(ciphertext.count) bytes is not whole AES blocks")
        }
        return try run(ciphertext, key: key, iv: iv, encrypting: false)
    }

    /// The output is written in place: no zeroed buffer, no copy of it (a chunk's worth each).
    private static func run(_ input: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8], encrypting: Bool)
        throws(QuickShareError) -> [UInt8]
    {
        guard key.count == 32, iv.count == 16 else {
            throw QuickShareError("AES-256-CBC needs a 32-byte key and a 16-byte IV")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw QuickShareError("libcrypto could not make a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, key, iv, encrypting ? 1 : 0) == 1 else {
            throw QuickShareError("libcrypto could not start AES-256-CBC")
        }
        guard let inputCount = Int32(exactly: input.count) else {
            throw QuickShareError("a body of \(input.count) bytes is too large for AES-256-CBC")
        }
        var ok = false
        let output = [UInt8](unsafeUninitializedCapacity: input.count + 16) { output, count in
            var written: Int32 = 0
            var finished: Int32 = 0
            ok =
                input.withUnsafeBufferPointer { input in
                    guard let base = output.baseAddress,
                        EVP_CipherUpdate(context, base, &written, input.baseAddress, inputCount) == 1
                    else { return false }
                    return EVP_CipherFinal_ex(context, base + Int(written), &finished) == 1
                }
            count = ok ? Int(written) + Int(finished) : 0
        }
        guard ok else { throw QuickShareError(encrypting ? "AES-256-CBC failed" : "a body does not decrypt") }
        return output
    }
}
