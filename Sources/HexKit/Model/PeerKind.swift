/// Which protocol a peer speaks: hexd's own (the original app's envelopes, over TLS between
/// key-derived IDs), or another one hexd speaks to reach the devices people already own. Open:
/// each protocol declares its kind where it lives (`LocalSendCore` declares `localsend`), and a
/// daemon newer than its reader may name one the reader does not know.
public struct PeerKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's name in the control protocol and the store (`hexd`, `localsend`): 1 to 32 lower-case
    /// ASCII letters, digits and `-`.
    public let rawValue: String

    /// The kind named `rawValue`; nil unless it has the form of a kind's name.
    public init?(rawValue: String) {
        let isName =
            (1...32).contains(rawValue.utf8.count)
            && rawValue.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
        guard isName else { return nil }
        self.rawValue = rawValue
    }

    /// The kind a protocol declares as its own (`PeerKind(declaring: "localsend")`): its name is written
    /// in the code, not read from any input (`ForeignCarriersTests` checks every carrier's has the form).
    public init(declaring name: StaticString) {
        rawValue = name.description
    }

    /// hexd's own protocol: its peers go by UUIDs.
    public static let hexd = PeerKind(declaring: "hexd")

    public var description: String { rawValue }
}

extension PeerKind: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let kind = PeerKind(rawValue: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a kind of peer")
        }
        self = kind
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
