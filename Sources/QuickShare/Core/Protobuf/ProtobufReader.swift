/// Reads the fields of one protocol buffers message from untrusted bytes. Every length is checked
/// against what is left, a varint may not run past ten bytes, and groups (wire types 3 and 4, which
/// no message here declares) are refused, so no input can trap or read out of bounds.
public struct ProtobufReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.offset = bytes.startIndex
    }

    public var isAtEnd: Bool { offset == bytes.endIndex }

    /// The next field, or nil at the end of the message.
    public mutating func field() throws(ProtobufError) -> ProtobufField? {
        guard !isAtEnd else { return nil }
        let key = try varint()
        let number = key >> 3
        // Field numbers are at most 2^29 - 1; zero is never one.
        guard number > 0, number < 1 << 29 else { throw ProtobufError("field number \(number) is not valid") }
        let value: ProtobufField.Value
        switch key & 7 {
        case 0:
            value = .varint(try varint())
        case 1:
            value = .fixed64(try littleEndian(8))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - offset) else {
                throw ProtobufError("field \(number) runs past the end of its message")
            }
            let end = offset + Int(length)
            value = .bytes(bytes[offset..<end])
            offset = end
        case 5:
            value = .fixed32(UInt32(truncatingIfNeeded: try littleEndian(4)))
        default:
            throw ProtobufError("field \(number) has wire type \(key & 7), which is not read here")
        }
        return ProtobufField(number: Int(number), value: value)
    }

    /// A base-128 varint of at most ten bytes.
    public mutating func varint() throws(ProtobufError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard offset < bytes.endIndex else { throw ProtobufError("a varint runs past the end") }
            let byte = bytes[offset]
            offset += 1
            // The tenth byte carries the top bit alone; what it sets beyond is dropped, as protobuf does.
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        throw ProtobufError("a varint is longer than ten bytes")
    }

    private mutating func littleEndian(_ count: Int) throws(ProtobufError) -> UInt64 {
        guard count <= bytes.endIndex - offset else { throw ProtobufError("a fixed-width field runs past the end") }
        var value: UInt64 = 0
        for index in 0..<count {
            value |= UInt64(bytes[offset + index]) << (8 * UInt64(index))
        }
        offset += count
        return value
    }
}
