/// A D-Bus value with its type.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UInt32)
    /// Elements of one type (given, so that an empty array has a signature too).
    case array(DBusType, [DBusValue])
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    public struct DictionaryEntry: Sendable, Equatable {
        public var key: DBusValue
        public var value: DBusValue

        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// An array of strings (`as`).
    public static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map { .string($0) }) }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var uint32Value: UInt32? {
        if case .uint32(let value) = self { return value }
        return nil
    }

    public var int32Value: Int32? {
        if case .int32(let value) = self { return value }
        return nil
    }

    public var uint16Value: UInt16? {
        if case .uint16(let value) = self { return value }
        return nil
    }

    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    public var objectPathValue: String? {
        if case .objectPath(let value) = self { return value }
        return nil
    }

    /// An array of byte arrays (`aay`), as DNS-SD TXT strings travel.
    public static func byteStrings(_ values: [[UInt8]]) -> DBusValue {
        .array(.array(.byte), values.map { .array(.byte, $0.map { .byte($0) }) })
    }

    /// The byte arrays of an `aay`; nil for a value of another type.
    public var byteStringsValue: [[UInt8]]? {
        guard case .array(.array(.byte), let elements) = self else { return nil }
        var strings: [[UInt8]] = []
        for element in elements {
            guard case .array(.byte, let bytes) = element else { return nil }
            strings.append(bytes.compactMap { if case .byte(let byte) = $0 { byte } else { nil } })
        }
        return strings
    }
}
