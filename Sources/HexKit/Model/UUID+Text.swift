extension UUID {
    /// The UUID as the original app wrote it, and as hexd stores and sends it: 36 characters,
    /// uppercase. Formatted here rather than by `uuidString`, which on Linux goes through
    /// `snprintf`: storing a 100,000-link hex spent an eighth of its time there.
    public var uppercaseText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var count = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[count] = UInt8(ascii: "-")
                        count += 1
                    }
                    text[count] = Self.digit(byte >> 4)
                    text[count + 1] = Self.digit(byte & 0x0F)
                    count += 2
                }
                return count
            }
        }
    }

    /// The uppercase hexadecimal digit of `value` (0...15).
    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
