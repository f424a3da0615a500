/// A string from the wire that names something (an operation, an object type, a service).
///
/// Known values have static constants; unknown values are kept exactly as received, so a peer of a
/// newer version never makes decoding fail and the value can be shown, stored or forwarded.
public protocol WireName: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
}

extension WireName {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

/// The `operationType` of an envelope: what the receiver is asked to do.
public struct OperationType: WireName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Store the `jmObject` (a Hex) in the receiver's inbox. Original app.
    public static let store: Self = "Store"
    /// Show `message` to the receiver. Original app.
    public static let alert: Self = "Alert"
    /// Reply to an envelope that carried a `messageID`. hexd extension; never sent to 1.x peers.
    public static let ack: Self = "Ack"
    /// One step of pairing two devices' keys (`PairJM`). hexd extension; only over TLS.
    public static let pair: Self = "Pair"
    /// Ask for the bytes of a file granted to this device (`FetchJM`). hexd extension; only over TLS.
    public static let fetch: Self = "Fetch"

    /// The operations the original (1.x) app understood; anything else crashed it.
    public static let legacy: Set<Self> = [.store, .alert]
}

/// The `jmObjectType` of an envelope: the kind of object in `jmObject`.
public struct JMObjectType: WireName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A HexJM. The only object type the original app sent.
    public static let hex: Self = "Hex"
    /// A PairJM, in a `Pair` envelope. hexd extension.
    public static let pair: Self = "Pair"
    /// A FetchJM, in a `Fetch` envelope. hexd extension.
    public static let fetch: Self = "Fetch"
    /// A FileRangeJM, in the Ack `sending` that answers a Fetch. hexd extension.
    public static let fileRange: Self = "FileRange"
}

/// The `service` of a link: where the link points (a cloud service, or `Unknown` for a plain URL).
public struct Service: WireName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unknown: Self = "Unknown"
    public static let dropbox: Self = "Dropbox"
    public static let box: Self = "Box"
    public static let googleDrive: Self = "GoogleDrive"

    /// The four services the original (1.x) app knew; any other value, or none, crashed it.
    public static let legacy: Set<Self> = [.unknown, .dropbox, .box, .googleDrive]

    /// This service as a 1.x peer can take it: itself if the original app knew it, else `Unknown`.
    public var legacySafe: Service { Self.legacy.contains(self) ? self : .unknown }
}
