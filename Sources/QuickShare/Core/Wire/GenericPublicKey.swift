/// A P-256 public key as UKEY2 carries it: `GenericPublicKey{type: EC_P256, ec_p256_public_key{x, y}}`
/// (securemessage.proto), the coordinates as two's-complement big-endian integers, so a coordinate
/// whose top bit is set gets a leading zero byte.
public struct GenericPublicKey: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    static let ecP256Type: Int32 = 1

    /// The coordinates as unsigned 32-byte numbers.
    public var x: [UInt8]
    public var y: [UInt8]

    public init(x: [UInt8], y: [UInt8]) {
        self.x = x
        self.y = y
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        var type: Int32 = 0
        var point: Coordinates?
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: type = try field.int32()
            case 2: point = try field.message(Coordinates.self)
            default: break
            }
        }
        guard type == Self.ecP256Type, let point else { throw ProtobufError("a public key that is not P-256") }
        x = try Self.unsigned(point.x)
        y = try Self.unsigned(point.y)
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.int32(1, Self.ecP256Type)
        writer.message(2, Coordinates(x: Self.twosComplement(x), y: Self.twosComplement(y)))
    }

    /// A coordinate as 32 unsigned bytes: a sign byte dropped, a short one padded. A 32-byte value with
    /// its top bit set is read as unsigned, as NearDrop and rquickshare read it (some writers leave the
    /// sign byte out); a point that is then not on the curve fails the key agreement.
    static func unsigned(_ bytes: [UInt8]) throws(ProtobufError) -> [UInt8] {
        let significant = bytes.drop { $0 == 0 }
        guard significant.count <= 32 else { throw ProtobufError("a P-256 coordinate is over 32 bytes") }
        return [UInt8](repeating: 0, count: 32 - significant.count) + significant
    }

    /// The shortest two's-complement form of an unsigned number, as Java's BigInteger writes it.
    static func twosComplement(_ bytes: [UInt8]) -> [UInt8] {
        let significant = Array(bytes.drop { $0 == 0 })
        guard let first = significant.first else { return [0] }
        return first & 0x80 == 0 ? significant : [0] + significant
    }

    private struct Coordinates: ProtobufEncodable, ProtobufDecodable {
        var x: [UInt8]
        var y: [UInt8]

        init(x: [UInt8], y: [UInt8]) {
            self.x = x
            self.y = y
        }

        init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            x = []
            y = []
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                switch field.number {
                case 1: x = try field.bytes()
                case 2: y = try field.bytes()
                default: break
                }
            }
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, x)
            writer.bytes(2, y)
        }
    }
}
