import HexJSON
import HexKit

/// JSON as the control socket writes and reads it: compact, sorted keys, ISO 8601 dates.
public enum ControlCoding {
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return Array(try encoder.encode(value))
    }

    /// Reads with this package's own JSON reader (Foundation's traps on some hostile input).
    /// - Throws: `JSONError` when the bytes are not JSON, `DecodingError` when they do not fit `type`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONValueDecoder().decode(type, from: bytes)
    }
}
