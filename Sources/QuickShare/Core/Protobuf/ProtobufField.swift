/// One field of a protocol buffers message as it was read: its number and its value in the form its
/// wire type gives. The typed readers convert as protobuf's own runtime does (an `int32` is the low
/// 32 bits of its varint) and refuse a field written with a wire type its declaration does not have.
public struct ProtobufField: Sendable {
    public enum Value: Sendable, Equatable {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    public let number: Int
    public let value: Value

    public func uint64() throws(ProtobufError) -> UInt64 {
        guard case .varint(let value) = value else { throw mismatch("a varint") }
        return value
    }

    public func int64() throws(ProtobufError) -> Int64 {
        Int64(bitPattern: try uint64())
    }

    /// An `int32`, `uint32` or enum field: protobuf keeps the low 32 bits of the varint.
    public func int32() throws(ProtobufError) -> Int32 {
        Int32(truncatingIfNeeded: try uint64())
    }

    public func bool() throws(ProtobufError) -> Bool {
        try uint64() != 0
    }

    public func bytes() throws(ProtobufError) -> [UInt8] {
        Array(try slice())
    }

    /// A `bytes` field without copying it: a view of the message it was read from. For the large
    /// fields a payload's bytes pass through, each of which a copy would cost a fresh mapping.
    public func byteView() throws(ProtobufError) -> ArraySlice<UInt8> {
        try slice()
    }

    /// A `string` field, which protobuf requires to be UTF-8.
    public func string() throws(ProtobufError) -> String {
        let bytes = try slice()
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ProtobufError("field \(number) is not UTF-8")
        }
        return text
    }

    public func message<Message: ProtobufDecodable>(_ type: Message.Type) throws(ProtobufError) -> Message {
        try Message(protobuf: try slice())
    }

    /// A repeated varint field, in either form a writer may use: one value, or a packed run of them.
    public func packedVarints(atMost limit: Int) throws(ProtobufError) -> [UInt64] {
        switch value {
        case .varint(let value):
            return [value]
        case .bytes(let run):
            var reader = ProtobufReader(run)
            var values: [UInt64] = []
            while !reader.isAtEnd {
                guard values.count < limit else { throw ProtobufError("field \(number) packs over \(limit) values") }
                values.append(try reader.varint())
            }
            return values
        default:
            throw mismatch("a varint or a packed run")
        }
    }

    private func slice() throws(ProtobufError) -> ArraySlice<UInt8> {
        guard case .bytes(let bytes) = value else { throw mismatch("length-delimited") }
        return bytes
    }

    private func mismatch(_ expected: String) -> ProtobufError {
        ProtobufError("field \(number) is not \(expected)")
    }
}

/// A message that can be read from protocol buffers bytes that anyone may have written.
public protocol ProtobufDecodable {
    init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError)
}

/// A message that writes itself as protocol buffers, its fields in the order of their numbers.
public protocol ProtobufEncodable {
    func encode(to writer: inout ProtobufWriter)
}

extension ProtobufEncodable {
    /// The message's bytes.
    public var protobuf: [UInt8] {
        var writer = ProtobufWriter()
        encode(to: &writer)
        return writer.bytes
    }
}

extension ProtobufDecodable {
    /// Reads a message from a whole byte array.
    public init(protobuf bytes: [UInt8]) throws(ProtobufError) {
        try self.init(protobuf: bytes[...])
    }

    /// Calls `body` for each field of `bytes`, in the order they were written.
    static func forEachField(
        in bytes: ArraySlice<UInt8>, _ body: (ProtobufField) throws(ProtobufError) -> Void
    ) throws(ProtobufError) {
        var reader = ProtobufReader(bytes)
        while let field = try reader.field() {
            try body(field)
        }
    }
}
