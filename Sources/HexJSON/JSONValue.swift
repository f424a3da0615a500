/// A JSON value held whole: for small texts read strictly (beacons, control messages), where a
/// tree is simpler than pulling values in order. Peers' envelopes are read with `JSONScanner`
/// directly instead, so that nothing they send is kept unless it is needed.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Trees are for small texts, so they are kept shallow: deep nesting is refused early.
    public static let defaultLimits = JSONLimits(maximumDepth: 64)

    /// Reads one whole JSON text.
    /// - Throws: `JSONError`, including `.invalidUnicode` for a string that is not valid Unicode.
    public static func parse(_ bytes: some Collection<UInt8>, limits: JSONLimits = defaultLimits) throws(JSONError)
        -> JSONValue
    {
        try JSONScanner.scan(bytes, limits: limits) { scanner throws(JSONError) in
            let value = try scanner.readValue()
            try scanner.expectEnd()
            return value
        }
    }
}

/// An object's members in the order written. A key written twice reads as its last value.
public struct JSONObject: Sendable, Hashable {
    public struct Member: Sendable, Hashable {
        public let key: String
        public let value: JSONValue
    }

    public private(set) var members: [Member] = []

    public init(_ members: [Member] = []) {
        self.members = members
    }

    public subscript(key: String) -> JSONValue? {
        members.last { $0.key == key }?.value
    }

    /// The distinct keys, in the order first written.
    public var keys: [String] {
        var seen = Set<String>()
        return members.map(\.key).filter { seen.insert($0).inserted }
    }

    mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }
}

extension JSONScanner {
    /// Reads the next value as a tree. Recursive, so callers keep `limits.maximumDepth` small
    /// (`JSONValue.defaultLimits`).
    public mutating func readValue() throws(JSONError) -> JSONValue {
        switch try peekKind() {
        case .null:
            try readNull()
            return .null
        case .bool: return .bool(try readBool())
        case .number: return .number(try readNumber())
        case .string: return .string(try readValidString())
        case .array:
            var elements: [JSONValue] = []
            try readArray { scanner throws(JSONError) in elements.append(try scanner.readValue()) }
            return .array(elements)
        case .object:
            var object = JSONObject()
            try readObject { scanner, key throws(JSONError) in
                guard let name = scanner.string(key) else { throw JSONError(.invalidUnicode, at: key.start) }
                object.append(name, try scanner.readValue())
            }
            return .object(object)
        }
    }

    /// Reads a string that must be valid Unicode.
    private mutating func readValidString() throws(JSONError) -> String {
        let token = try readStringToken()
        guard let string = string(token) else { throw JSONError(.invalidUnicode, at: token.start) }
        return string
    }
}
