/// A link to a file one peer granted to another (the `peer` link provider), in the scheme
/// `hexd://<owner's device ID>/f/<grant id>/<name>` (Protocol.md, section 15). The name is the
/// file's as shared, percent-encoded; it only says what the file is called, never where it lands.
public struct PeerFileLink: Sendable, Hashable {
    /// The granting device's ID, uppercase: the key a fetch must reach.
    public var ownerID: String
    /// 32 lowercase hex digits.
    public var grant: String
    public var name: String

    public static let scheme = "hexd://"
    /// The longest link read: a name longer than a file system takes is no use.
    public static let maximumLength = 4_096

    public init(ownerID: String, grant: String, name: String) {
        self.ownerID = ownerID.uppercased()
        self.grant = grant.lowercased()
        self.name = name
    }

    /// Reads a link, strictly: nil for anything that is not one (another scheme, a malformed id or
    /// grant, a name with a broken escape).
    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength, text.hasPrefix(Self.scheme) else { return nil }
        let parts = text.dropFirst(Self.scheme.count)
            .split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[1] == "f", let owner = UUID(strict: String(parts[0])),
            GrantID.isWellFormed(String(parts[2])), let name = Self.percentDecoded(parts[3]), !name.isEmpty
        else { return nil }
        self.init(ownerID: owner.uppercaseText, grant: String(parts[2]), name: name)
    }

    /// The link as text.
    public var text: String {
        Self.scheme + ownerID + "/f/" + grant + "/" + Self.percentEncoded(name)
    }

    /// Every byte but the unreserved characters of RFC 3986 escaped.
    static func percentEncoded(_ name: String) -> String {
        var encoded = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (digits.count == 1 ? "0" : "") + digits
            }
        }
        return encoded
    }

    /// The text with its escapes decoded; nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(HexDigits.value(of:)),
                let low = iterator.next().flatMap(HexDigits.value(of:))
            else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
