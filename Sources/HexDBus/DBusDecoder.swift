/// Reads values of given types from a message's bytes, checking every length, alignment and
/// string against the bytes there are: nothing it is given can make it trap or read past the end.
struct DBusDecoder {
    private let bytes: [UInt8]
    private let littleEndian: Bool
    /// Where the bytes read end (the header's or the body's end).
    var limit: Int
    private(set) var position: Int
    /// Variants may nest values as deep as they like; the decoder does not follow past this.
    private static let maximumDepth = 64

    init(_ bytes: [UInt8], littleEndian: Bool, from position: Int = 0, limit: Int? = nil) {
        self.bytes = bytes
        self.littleEndian = littleEndian
        self.position = position
        self.limit = min(limit ?? bytes.count, bytes.count)
    }

    mutating func skipPadding(to alignment: Int) throws(DBusError) {
        let target = (position + alignment - 1) / alignment * alignment
        guard target <= limit else { throw .malformed("padding past the end") }
        guard bytes[position..<target].allSatisfy({ $0 == 0 }) else { throw .malformed("padding that is not zero") }
        position = target
    }

    private mutating func take(_ count: Int) throws(DBusError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= limit - position else { throw .malformed("a value past the end") }
        defer { position += count }
        return bytes[position..<position + count]
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(DBusError) -> T {
        try skipPadding(to: MemoryLayout<T>.size)
        var value: T = 0
        for (index, byte) in try take(MemoryLayout<T>.size).enumerated() {
            let shift = littleEndian ? index * 8 : (MemoryLayout<T>.size - 1 - index) * 8
            value |= T(truncatingIfNeeded: byte) << shift
        }
        return value
    }

    mutating func readUInt32() throws(DBusError) -> UInt32 { try integer(UInt32.self) }

    private mutating func text(length: Int) throws(DBusError) -> String {
        let utf8 = try take(length)
        guard try take(1).first == 0 else { throw .malformed("a string without its terminating zero") }
        guard !utf8.contains(0), let text = String(validating: utf8, as: UTF8.self) else {
            throw .malformed("a string that is not UTF-8 without zero bytes")
        }
        return text
    }

    mutating func read(_ type: DBusType, depth: Int = 0) throws(DBusError) -> DBusValue {
        guard depth < Self.maximumDepth else { throw .malformed("values nested deeper than \(Self.maximumDepth)") }
        switch type {
        case .byte: return .byte(try take(1).first ?? 0)
        case .boolean:
            let value = try integer(UInt32.self)
            guard value <= 1 else { throw .malformed("a boolean of \(value)") }
            return .boolean(value == 1)
        case .int16: return .int16(try integer(Int16.self))
        case .uint16: return .uint16(try integer(UInt16.self))
        case .int32: return .int32(try integer(Int32.self))
        case .uint32: return .uint32(try integer(UInt32.self))
        case .unixFD: return .unixFD(try integer(UInt32.self))
        case .int64: return .int64(try integer(Int64.self))
        case .uint64: return .uint64(try integer(UInt64.self))
        case .double: return .double(Double(bitPattern: try integer(UInt64.self)))
        case .string: return .string(try text(length: Int(try integer(UInt32.self))))
        case .objectPath: return .objectPath(try text(length: Int(try integer(UInt32.self))))
        case .signature: return .signature(try signatureText())
        case .variant:
            let inner = try DBusType.parseSingle(try signatureText())
            return .variant(try read(inner, depth: depth + 1))
        case .structure(let fields):
            try skipPadding(to: 8)
            var values: [DBusValue] = []
            for field in fields { values.append(try read(field, depth: depth + 1)) }
            return .structure(values)
        case .array(let element):
            var values: [DBusValue] = []
            try readArray(alignment: element.alignment) { decoder throws(DBusError) in
                values.append(try decoder.read(element, depth: depth + 1))
            }
            return .array(element, values)
        case .dictionary(let key, let value):
            var entries: [DBusValue.DictionaryEntry] = []
            try readArray(alignment: 8) { decoder throws(DBusError) in
                try decoder.skipPadding(to: 8)
                let entryKey = try decoder.read(key, depth: depth + 1)
                entries.append(.init(entryKey, try decoder.read(value, depth: depth + 1)))
            }
            return .dictionary(key: key, value: value, entries)
        }
    }

    private mutating func signatureText() throws(DBusError) -> String {
        let length = Int(try take(1).first ?? 0)
        return try text(length: length)
    }

    /// Reads elements until the array's byte length is used up exactly.
    private mutating func readArray(
        alignment: Int, _ element: (inout DBusDecoder) throws(DBusError) -> Void
    ) throws(DBusError) {
        let length = Int(try integer(UInt32.self))
        guard length <= 1 << 26 else { throw .malformed("an array longer than 64 MiB") }
        try skipPadding(to: alignment)
        let end = position + length
        guard end <= limit else { throw .malformed("an array past the end") }
        let outer = limit
        limit = end
        defer { limit = outer }
        while position < end {
            let before = position
            try element(&self)
            guard position > before else { throw .malformed("an array element of no bytes") }
        }
    }
}
