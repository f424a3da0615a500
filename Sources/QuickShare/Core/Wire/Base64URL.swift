/// Base64 with the URL-safe alphabet and no padding (RFC 4648 section 5), in which Quick Share's
/// mDNS instance names and TXT `n` values are written.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 {
                group = group << 8 | UInt32(offset < count ? bytes[index + offset] : 0)
            }
            for position in 0...count {
                output.append(alphabet[Int(group >> (18 - 6 * UInt32(position)) & 0x3F)])
            }
            index += count
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of `text`, or nil when it is not URL-safe base64 (padding is taken and ignored).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        for character in text.utf8 where character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            values.append(UInt8(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < values.count {
            let count = min(4, values.count - index)
            var group: UInt32 = 0
            for offset in 0..<4 {
                group = group << 6 | UInt32(offset < count ? values[index + offset] : 0)
            }
            for position in 0..<(count - 1) {
                output.append(UInt8(truncatingIfNeeded: group >> (16 - 8 * UInt32(position))))
            }
            index += count
        }
        return output
    }
}
