import HexJSON

/// The object of a `Fetch` envelope (`jmObjectType` `Fetch`): which shared file a peer asks for,
/// and from where (Protocol.md, section 15). hexd extension; only ever sent over TLS, to the
/// peer that granted the file.
///
/// Every field is checked as it is read: a `FetchJM` in hand names a well-formed grant and a
/// range inside what a file can be.
public struct FetchJM: Sendable, Hashable {
    /// The grant's id: 32 lowercase hex digits.
    public var grant: String
    /// The first byte wanted.
    public var offset: Int64
    /// The SHA-256 of the bytes before `offset`, as the fetching side holds them (64 lowercase hex
    /// digits); required when `offset` is more than 0, so a resume continues only bytes that match.
    public var prefixSHA256: String?

    public init(grant: String, offset: Int64 = 0, prefixSHA256: String? = nil) {
        self.grant = grant
        self.offset = offset
        self.prefixSHA256 = prefixSHA256
    }

    /// Reads a `jmObject`; nil when a field is missing, of the wrong type or malformed.
    public init?(_ raw: RawJSON) {
        guard case .object(let object)? = try? JSONValue.parse(raw.bytes),
            case .string(let grant)? = object["grant"], GrantID.isWellFormed(grant)
        else { return nil }
        var offset: Int64 = 0
        switch object["offset"] {
        case nil, .null?: break
        case .number(let number)?:
            guard let value = number.integer(as: Int64.self), value >= 0 else { return nil }
            offset = value
        default: return nil
        }
        var prefix: String?
        switch object["prefixSHA256"] {
        case nil, .null?: break
        case .string(let text)? where HexDigits.isHex(text, count: 64): prefix = text.lowercased()
        default: return nil
        }
        guard offset == 0 || prefix != nil else { return nil }
        self.init(grant: grant.lowercased(), offset: offset, prefixSHA256: prefix)
    }

    /// The object as a `jmObject`: keys sorted, unset ones left out.
    public var raw: RawJSON {
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.member("grant", grant)
        writer.member("offset", offset)
        writer.member("prefixSHA256", prefixSHA256)
        writer.endObject()
        return RawJSON(compacted: writer.bytes)
    }
}

/// The object of the Ack that answers a `Fetch` with status `sending` (`jmObjectType`
/// `FileRange`): what the bytes that follow the Ack's line are. Exactly `length` raw bytes come
/// after the line's newline, then the connection carries lines again.
public struct FileRangeJM: Sendable, Hashable {
    /// The file's name as its owner shared it (the fetching side makes it safe: `SafeFileName`).
    public var name: String
    /// The whole file's size and SHA-256 (64 lowercase hex digits), as granted.
    public var size: Int64
    public var sha256: String
    /// Where the bytes that follow begin, and how many there are (to the end of the file).
    public var offset: Int64
    public var length: Int64

    /// The longest name sent; a longer one is cut.
    public static let maximumNameBytes = 1_024

    public init(name: String, size: Int64, sha256: String, offset: Int64, length: Int64) {
        self.name = name.clipped(toUTF8: Self.maximumNameBytes)
        self.size = size
        self.sha256 = sha256
        self.offset = offset
        self.length = length
    }

    /// Reads a `jmObject`; nil unless every field is there and the range lies inside the file.
    public init?(_ raw: RawJSON) {
        guard case .object(let object)? = try? JSONValue.parse(raw.bytes),
            case .string(let name)? = object["name"], case .string(let sha256)? = object["sha256"],
            HexDigits.isHex(sha256, count: 64)
        else { return nil }
        guard let size = object.integer("size", as: Int64.self), let offset = object.integer("offset", as: Int64.self),
            let length = object.integer("length", as: Int64.self), offset >= 0, length >= 0, offset <= size,
            length == size - offset
        else { return nil }
        self.init(name: name, size: size, sha256: sha256.lowercased(), offset: offset, length: length)
    }

    /// The object as a `jmObject`: keys sorted.
    public var raw: RawJSON {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("length", length)
        writer.member("name", name)
        writer.member("offset", offset)
        writer.member("sha256", sha256)
        writer.member("size", size)
        writer.endObject()
        return RawJSON(compacted: writer.bytes)
    }
}

extension Envelope {
    /// A Fetch envelope asking for a granted file.
    public static func fetch(_ fetch: FetchJM, versionID: String, messageID: String) -> Self {
        Self(
            versionID: versionID, operationType: .fetch, jmObjectType: .fetch, jmObject: .opaque(fetch.raw),
            messageID: messageID)
    }

    /// The Ack `sending` that comes before the bytes of `range`.
    public static func sending(
        _ range: FileRangeJM, messageID: String?, versionID: String
    ) -> Self {
        Self(
            versionID: versionID, operationType: .ack, message: "sending \(range.length) bytes",
            jmObjectType: .fileRange, jmObject: .opaque(range.raw), messageID: messageID, status: .sending)
    }

    /// The request this envelope carries, when it is a well-formed Fetch.
    public var fetch: FetchJM? {
        guard operationType == .fetch, jmObjectType == .fetch, case .opaque(let raw)? = jmObject else { return nil }
        return FetchJM(raw)
    }

    /// The range announced, when this is an Ack `sending` with a well-formed one.
    public var fileRange: FileRangeJM? {
        guard operationType == .ack, status == .sending, jmObjectType == .fileRange,
            case .opaque(let raw)? = jmObject
        else { return nil }
        return FileRangeJM(raw)
    }
}
