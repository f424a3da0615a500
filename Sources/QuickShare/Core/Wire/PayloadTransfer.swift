/// `PayloadTransferFrame`: one chunk of a payload (bytes held whole, or a file written as it comes),
/// or a control message about one.
public struct PayloadTransfer: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public enum Kind: Int32, Sendable {
        case bytes = 1
        case file = 2
        case stream = 3
    }

    /// `PacketType`'s values.
    public static let data: Int32 = 1
    public static let control: Int32 = 2
    /// `PayloadChunk.Flags.LAST_CHUNK`.
    public static let lastChunkFlag: Int32 = 1

    public var packetType: Int32
    public var payloadID: Int64
    public var kind: Kind?
    public var totalSize: Int64
    /// A FILE payload's name, which NearDrop leaves out and pyquickshare's receiver needs (it names
    /// the file it writes by it, not by the introduction's `FileMetadata`).
    public var fileName: String?
    public var flags: Int32
    public var offset: Int64
    /// A view of the frame read: a chunk's bytes are not copied until they are kept.
    public var body: ArraySlice<UInt8>
    /// A control message's event (`PAYLOAD_ERROR` 1, `PAYLOAD_CANCELED` 2), when this is one.
    public var controlEvent: Int32?

    public init(
        packetType: Int32 = Self.data, payloadID: Int64, kind: Kind, totalSize: Int64, fileName: String? = nil,
        flags: Int32 = 0, offset: Int64, body: ArraySlice<UInt8>, controlEvent: Int32? = nil
    ) {
        self.fileName = fileName
        self.packetType = packetType
        self.payloadID = payloadID
        self.kind = kind
        self.totalSize = totalSize
        self.flags = flags
        self.offset = offset
        self.body = body
        self.controlEvent = controlEvent
    }

    public var isLastChunk: Bool { flags & Self.lastChunkFlag != 0 }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        packetType = 0
        payloadID = 0
        kind = nil
        totalSize = 0
        fileName = nil
        flags = 0
        offset = 0
        body = []
        controlEvent = nil
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: packetType = try field.int32()
            case 2:
                try Self.forEachField(in: try field.byteView()) { header throws(ProtobufError) in
                    switch header.number {
                    case 1: payloadID = try header.int64()
                    case 2: kind = Kind(rawValue: try header.int32())
                    case 3: totalSize = try header.int64()
                    case 5: fileName = try header.string()
                    default: break
                    }
                }
            case 3:
                try Self.forEachField(in: try field.byteView()) { chunk throws(ProtobufError) in
                    switch chunk.number {
                    case 1: flags = try chunk.int32()
                    case 2: offset = try chunk.int64()
                    case 3: body = try chunk.byteView()
                    default: break
                    }
                }
            case 4:
                try Self.forEachField(in: try field.byteView()) { control throws(ProtobufError) in
                    switch control.number {
                    case 1: controlEvent = try control.int32()
                    case 2: offset = try control.int64()
                    default: break
                    }
                }
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.int32(1, packetType)
        var header = ProtobufWriter()
        header.int64(1, payloadID)
        if let kind { header.int32(2, kind.rawValue) }
        header.int64(3, totalSize)
        header.bool(4, false)
        if let fileName { header.string(5, fileName) }
        writer.bytes(2, header.bytes)
        if let controlEvent {
            var control = ProtobufWriter()
            control.int32(1, controlEvent)
            control.int64(2, offset)
            writer.bytes(4, control.bytes)
        } else {
            var chunk = ProtobufWriter()
            chunk.int32(1, flags)
            chunk.int64(2, offset)
            if !body.isEmpty { chunk.bytes(3, body) }
            writer.bytes(3, chunk.bytes)
        }
    }
}
