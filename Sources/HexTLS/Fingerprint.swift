import COpenSSL

/// A device's cryptographic identity: the SHA-256 of its certificate (DER), which holds its key.
///
/// A device makes its key and certificate once and never changes them, so the certificate's
/// hash names the key as well as the key's own hash would, and any TLS stack can compute it from
/// the certificate it is shown (Protocol.md, section 12). Written as 64 lowercase hex digits.
public struct Fingerprint: Sendable, Hashable, CustomStringConvertible {
    /// 32 bytes.
    public let bytes: [UInt8]

    init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Reads 64 hex digits (either case); nil for anything else.
    public init?(hex: String) {
        guard let bytes = Self.bytes(hex: hex, count: 32) else { return nil }
        self.bytes = bytes
    }

    /// The fingerprint of a certificate given as DER; nil only when libcrypto cannot hash.
    public init?(certificateDER der: [UInt8]) {
        guard let digest = SHA256.hash(der) else { return nil }
        bytes = digest
    }

    public var description: String { Self.hex(bytes) }

    /// The first 16 hex digits, in groups of four: enough for a person to compare at a glance.
    public var short: String {
        stride(from: 0, to: 16, by: 4).map { start in
            String(description.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    /// The bytes as lowercase hex digits.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `count` bytes from exactly twice as many hex digits (either case); nil for anything else.
    public static func bytes(hex: String, count: Int) -> [UInt8]? {
        hex.utf8.count == count * 2 ? bytes(hex: hex, maximumCount: count) : nil
    }

    /// The bytes of an even number of hex digits (either case), at most `maximumCount` bytes; nil
    /// for anything else.
    public static func bytes(hex: String, maximumCount: Int) -> [UInt8]? {
        guard hex.utf8.count <= maximumCount * 2, hex.utf8.count % 2 == 0 else { return nil }
        let digits = Array(hex.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.value(of: digits[index]), let low = Self.value(of: digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// SHA-256 through libcrypto.
enum SHA256 {
    /// The 32-byte digest; nil when libcrypto fails (it cannot allocate).
    static func hash(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }
        return done == 1 && length == 32 ? Array(digest.prefix(32)) : nil
    }
}
