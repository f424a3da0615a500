/// Writes the fields of one protocol buffers message, in the order they are given (a message writes
/// its fields by number, as protobuf's runtimes do, so the same message always has the same bytes).
public struct ProtobufWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func uint64(_ field: Int, _ value: UInt64) {
        key(field, wireType: 0)
        varint(value)
    }

    public mutating func int64(_ field: Int, _ value: Int64) {
        uint64(field, UInt64(bitPattern: value))
    }

    /// An `int32` or enum field: a negative value is sign-extended to ten bytes, as protobuf writes it.
    public mutating func int32(_ field: Int, _ value: Int32) {
        int64(field, Int64(value))
    }

    public mutating func bool(_ field: Int, _ value: Bool) {
        uint64(field, value ? 1 : 0)
    }

    public mutating func bytes(_ field: Int, _ value: some Collection<UInt8>) {
        key(field, wireType: 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func string(_ field: Int, _ value: String) {
        bytes(field, Array(value.utf8))
    }

    public mutating func message(_ field: Int, _ value: some ProtobufEncodable) {
        bytes(field, value.protobuf)
    }

    /// A repeated varint field in packed form, as proto3 and `[packed = true]` write it.
    public mutating func packed(_ field: Int, _ values: [UInt64]) {
        var run = ProtobufWriter()
        for value in values { run.varint(value) }
        bytes(field, run.bytes)
    }

    private mutating func key(_ field: Int, wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    private mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
