/// A D-Bus type, as a signature spells it (`s`, `as`, `a{sv}`, `(ii)`).
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD, variant
    case array(DBusType)
    /// `a{KV}`: an array of dictionary entries.
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// Where a value of this type starts, relative to the message: a multiple of this.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array, .dictionary: 4
        case .int64, .uint64, .double, .structure: 8
        }
    }

    /// The signature text.
    public var description: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.description
        case .dictionary(let key, let value): "a{" + key.description + value.description + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined() + ")"
        }
    }

    private var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// The complete types a signature lists, in order.
    /// - Throws: `DBusError.malformed` for anything the specification does not allow: more than
    ///   255 bytes, an unknown code, an unclosed or empty structure, a dictionary entry outside an
    ///   array or with a key that is not basic, nesting past 32 arrays or 32 structures.
    public static func parse(_ signature: String) throws(DBusError) -> [DBusType] {
        let codes = Array(signature.utf8)
        guard codes.count <= 255 else { throw .malformed("a signature longer than 255 bytes") }
        var position = 0
        var types: [DBusType] = []
        while position < codes.count {
            types.append(try parseOne(codes, &position, arrays: 0, structures: 0))
        }
        return types
    }

    /// The one complete type a variant's signature must hold.
    static func parseSingle(_ signature: String) throws(DBusError) -> DBusType {
        let types = try parse(signature)
        guard types.count == 1, let type = types.first else {
            throw .malformed("a variant's signature holds \(types.count) types")
        }
        return type
    }

    private static func parseOne(_ codes: [UInt8], _ position: inout Int, arrays: Int, structures: Int)
        throws(DBusError) -> DBusType
    {
        guard position < codes.count else { throw .malformed("a signature ends inside a type") }
        let code = codes[position]
        position += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < 32 else { throw .malformed("arrays nested deeper than 32") }
            if position < codes.count && codes[position] == UInt8(ascii: "{") {
                position += 1
                let key = try parseOne(codes, &position, arrays: arrays + 1, structures: structures)
                guard key.isBasic else { throw .malformed("a dictionary key that is not a basic type") }
                let value = try parseOne(codes, &position, arrays: arrays + 1, structures: structures)
                guard position < codes.count, codes[position] == UInt8(ascii: "}") else {
                    throw .malformed("a dictionary entry that is not closed after its key and value")
                }
                position += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(codes, &position, arrays: arrays + 1, structures: structures))
        case UInt8(ascii: "("):
            guard structures < 32 else { throw .malformed("structures nested deeper than 32") }
            var fields: [DBusType] = []
            while position < codes.count && codes[position] != UInt8(ascii: ")") {
                fields.append(try parseOne(codes, &position, arrays: arrays, structures: structures + 1))
            }
            guard position < codes.count, !fields.isEmpty else { throw .malformed("an empty or unclosed structure") }
            position += 1
            return .structure(fields)
        default:
            throw .malformed("an unknown type code \(code) in a signature")
        }
    }
}
