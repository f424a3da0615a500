import HexJSON

/// A JSON value kept as its compact text, for objects hexd carries without interpreting: holding
/// the bytes costs no more than the line they came in, whatever their shape.
public struct RawJSON: Sendable, Hashable, CustomStringConvertible {
    /// Valid, compact JSON: no white space between tokens, so never a raw newline.
    public let bytes: [UInt8]

    /// Bytes already validated and compacted by a `JSONScanner`.
    init(compacted bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Validates `text` as one JSON value and keeps it compacted.
    /// - Throws: `JSONError` when it is not one JSON value.
    public init(_ text: some Collection<UInt8>, limits: JSONLimits = .default) throws(JSONError) {
        bytes = try JSONScanner.scan(text, limits: limits) { scanner throws(JSONError) in
            let range = try scanner.skipValue()
            try scanner.expectEnd()
            return scanner.compactBytes(range)
        }
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }
}
