import HexNet

/// The page's access token: 32 random bytes in hex, in a 0600 file of the data directory. It is
/// made at the first start and kept, so that an open page (its cookie) survives a restart; remove
/// the file to make a new one at the next start.
enum WebToken {
    static func loadOrCreate(at path: String) throws(PrivateFileError) -> String {
        if let bytes = try PrivateFile.read(path) {
            let text = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
            let isHexDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
            if text.utf8.count == 64, text.utf8.allSatisfy(isHexDigit) {
                return text
            }
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }.joined()
        try PrivateFile.write(Array((token + "\n").utf8), to: path)
        return token
    }
}
