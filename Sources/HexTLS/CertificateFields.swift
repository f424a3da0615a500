import COpenSSL

/// What other protocols read from a certificate besides its fingerprint.
enum CertificateFields {
    /// The subject's common name (its last CN entry), as UTF-8; nil when it has none or it does
    /// not read as UTF-8 within 256 bytes.
    static func commonName(of certificate: OpaquePointer) -> String? {
        guard let name = X509_get_subject_name(certificate) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        var last = index
        while last >= 0 {
            let next = X509_NAME_get_index_by_NID(name, NID_commonName, last)
            guard next >= 0 else { break }
            last = next
        }
        guard last >= 0, let entry = X509_NAME_get_entry(name, last),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let count = ASN1_STRING_to_UTF8(&utf8, data)
        guard count >= 0, count <= 256, let utf8 else {
            if let utf8 { CRYPTO_free(utf8, #file, #line) }
            return nil
        }
        defer { CRYPTO_free(utf8, #file, #line) }
        let bytes = UnsafeBufferPointer(start: utf8, count: Int(count))
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The certificate's public key as DER (SubjectPublicKeyInfo).
    static func publicKeyDER(of certificate: OpaquePointer) -> [UInt8]? {
        guard let key = X509_get0_pubkey(certificate) else { return nil }
        let count = i2d_PUBKEY(key, nil)
        guard count > 0, count <= 16_384 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == count ? bytes : nil
    }
}
