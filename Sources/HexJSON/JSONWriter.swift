/// Writes compact JSON into a byte buffer: the caller lays out objects and arrays, the writer
/// escapes strings. Used where the exact bytes matter (envelopes on the wire) and where speed does.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether the container being written has a member or element already (a comma is due).
    private var needsComma = false

    /// - Parameter escapeSlashes: write `/` as `\/`, as the original Hexlist app did.
    public init(escapeSlashes: Bool = true, capacity: Int = 256) {
        self.escapeSlashes = escapeSlashes
        bytes.reserveCapacity(capacity)
    }

    private let escapeSlashes: Bool

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes a member's key; the member's value must follow.
    public mutating func key(_ key: String) {
        separate()
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) {
        separate()
        writeString(value)
        needsComma = true
    }

    /// A member whose value is a string, left out when the value is nil.
    public mutating func member(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    /// A member whose value is an integer.
    public mutating func member(_ key: String, _ value: Int64) {
        self.key(key)
        raw(Array(String(value).utf8))
    }

    /// A member whose value is `true` or `false`.
    public mutating func member(_ key: String, _ value: Bool) {
        self.key(key)
        raw(Array((value ? "true" : "false").utf8))
    }

    /// A member whose value is a string, or `null` when there is none.
    public mutating func member(_ key: String, orNull value: String?) {
        self.key(key)
        if let value { string(value) } else { raw(Array("null".utf8)) }
    }

    /// Writes JSON text that is already compact and valid, as it is.
    public mutating func raw(_ json: some Collection<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "/") where escapeSlashes:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
