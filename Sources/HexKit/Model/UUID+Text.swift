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

extension UUID {
    /// Reads a UUID from outside strictly, before it is compared with anything: exactly 36 ASCII
    /// characters, hex digits (either case) in groups of 8-4-4-4-12 joined by hyphens. Braces,
    /// missing hyphens, white space, zero-width or any other characters make it no UUID, so no
    /// second spelling of one ID can pass for another identity.
    public init?(strict text: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var high: UInt8?
        var index = 0
        for character in text.utf8 {
            defer { index += 1 }
            guard index < 36 else { return nil }
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = HexDigits.value(of: character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        guard index == 36, bytes.count == 16 else { return nil }
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// Whether this is a version 8 UUID, the form of a device ID derived from a key (Protocol.md,
    /// section 12.1): only TLS or a signed beacon can speak for one.
    public var isKeyDerived: Bool { uuid.6 >> 4 == 8 && uuid.8 >> 6 == 0b10 }

    /// The first 8 hex digits: enough to tell peers apart at a glance, shown beside every name.
    public var shortText: String { String(uppercaseText.prefix(8)) }
}

extension String {
    /// The text as a strictly read UUID (`UUID(strict:)`), uppercase; nil when it is not one.
    /// White space around it is no disguise, and is dropped first: " <uuid>" is that UUID.
    public var canonicalUUID: String? { UUID(strict: trimmed)?.uppercaseText }
}
