/// Nearby Sharing's frames (`wire_format.proto`), which travel as BYTES payloads once the channel is
/// secure: the paired-key exchange, the introduction of what is offered, the answer, and a cancel.
public enum SharingFrame: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    case introduction(Introduction)
    case response(Response)
    case pairedKeyEncryption(secretIDHash: [UInt8], signedData: [UInt8])
    case pairedKeyResult(PairedKeyResult)
    case cancel
    case other(type: Int32)

    /// `ConnectionResponseFrame.Status`'s values that hexd sends or reads.
    public enum Response: Int32, Sendable {
        case unknown = 0
        case accept = 1
        case reject = 2
        case notEnoughSpace = 3
        case unsupportedAttachmentType = 4
        case timedOut = 5
    }

    /// `PairedKeyResultFrame.Status`: a device that cannot check the other's certificates (every
    /// one outside Google's, as "Everyone" visibility has it) answers `unable`.
    public enum PairedKeyResult: Int32, Sendable {
        case unknown = 0
        case success = 1
        case fail = 2
        case unable = 3
    }

    private enum FrameType: Int32 {
        case introduction = 1
        case response = 2
        case pairedKeyEncryption = 3
        case pairedKeyResult = 4
        case cancel = 6
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        let frame = try VersionedFrame(protobuf: bytes, what: "a sharing frame")
        guard let known = FrameType(rawValue: frame.type) else {
            self = .other(type: frame.type)
            return
        }
        let body = frame.body
        switch known {
        case .introduction:
            self = .introduction(try Introduction(protobuf: body))
        case .response:
            self = .response(Response(rawValue: try Self.status(in: body) ?? 0) ?? .unknown)
        case .pairedKeyEncryption:
            var secretIDHash: [UInt8] = []
            var signedData: [UInt8] = []
            try Self.forEachField(in: body) { field throws(ProtobufError) in
                switch field.number {
                case 1: signedData = try field.bytes()
                case 2: secretIDHash = try field.bytes()
                default: break
                }
            }
            self = .pairedKeyEncryption(secretIDHash: secretIDHash, signedData: signedData)
        case .pairedKeyResult:
            self = .pairedKeyResult(PairedKeyResult(rawValue: try Self.status(in: body) ?? 0) ?? .unknown)
        case .cancel:
            self = .cancel
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        var body = ProtobufWriter()
        let type: Int32
        switch self {
        case .introduction(let introduction):
            type = FrameType.introduction.rawValue
            introduction.encode(to: &body)
        case .response(let status):
            type = FrameType.response.rawValue
            body.int32(1, status.rawValue)
        case .pairedKeyEncryption(let secretIDHash, let signedData):
            type = FrameType.pairedKeyEncryption.rawValue
            body.bytes(1, signedData)
            body.bytes(2, secretIDHash)
        case .pairedKeyResult(let status):
            type = FrameType.pairedKeyResult.rawValue
            body.int32(1, status.rawValue)
        case .cancel:
            return VersionedFrame.write(type: FrameType.cancel.rawValue, body: nil, to: &writer)
        case .other(let other):
            return VersionedFrame.write(type: other, body: nil, to: &writer)
        }
        VersionedFrame.write(type: type, body: body.bytes, to: &writer)
    }

    /// Field 1 of a response or paired-key result: the last one written, as protobuf reads a scalar.
    private static func status(in bytes: ArraySlice<UInt8>) throws(ProtobufError) -> Int32? {
        var value: Int32?
        try forEachField(in: bytes) { field throws(ProtobufError) in
            if field.number == 1 { value = try field.int32() }
        }
        return value
    }
}

/// `IntroductionFrame`: what a sender offers, before the receiver answers. hexd takes files and
/// texts; it counts the kinds it does not take so it can refuse an offer of them.
public struct Introduction: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    /// Attachments read at most: past them, an offer is only counted (`excess`), and refused whole:
    /// no person reviews ten thousand files.
    public static let maximumAttachments = 1_000

    public var files: [FileMetadata]
    public var texts: [TextMetadata]
    /// Wi-Fi credentials, apps and streams offered, which hexd does not take.
    public var otherAttachments: Int
    /// Attachments offered past `maximumAttachments`, not read.
    public var excess: Int

    public init(files: [FileMetadata] = [], texts: [TextMetadata] = [], otherAttachments: Int = 0) {
        self.files = files
        self.texts = texts
        self.otherAttachments = otherAttachments
        excess = 0
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        self.init()
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            guard [1, 2, 4, 5, 7].contains(field.number) else { return }
            guard files.count + texts.count + otherAttachments < Self.maximumAttachments else {
                excess += 1
                return
            }
            switch field.number {
            case 1: files.append(try field.message(FileMetadata.self))
            case 2: texts.append(try field.message(TextMetadata.self))
            default: otherAttachments += 1
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        for file in files { writer.message(1, file) }
        for text in texts { writer.message(2, text) }
    }
}

/// `FileMetadata`: one file offered, and the FILE payload that will carry it.
public struct FileMetadata: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public var name: String
    public var payloadID: Int64
    public var size: Int64
    public var mimeType: String
    /// The attachment's own id, which Android wants set (NearDrop `OutboundNearbyConnection.swift`).
    public var id: Int64

    public init(name: String, payloadID: Int64, size: Int64, mimeType: String, id: Int64) {
        self.name = name
        self.payloadID = payloadID
        self.size = size
        self.mimeType = mimeType
        self.id = id
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        self.init(name: "", payloadID: 0, size: 0, mimeType: "application/octet-stream", id: 0)
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: name = try field.string()
            case 3: payloadID = try field.int64()
            case 4: size = try field.int64()
            case 5: mimeType = try field.string()
            case 6: id = try field.int64()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.string(1, name)
        writer.int32(2, Self.kind(of: mimeType))
        writer.int64(3, payloadID)
        writer.int64(4, size)
        writer.string(5, mimeType)
        writer.int64(6, id)
    }

    /// `FileMetadata.Type` from the MIME type, as NearDrop's sender sets it: a phone files images
    /// and videos in its gallery by it.
    static func kind(of mimeType: String) -> Int32 {
        if mimeType.hasPrefix("image/") { return 1 }
        if mimeType.hasPrefix("video/") { return 2 }
        if mimeType.hasPrefix("audio/") { return 4 }
        return 5
    }
}

/// `TextMetadata`: one text offered (its kind and a title), and the BYTES payload that will carry it.
public struct TextMetadata: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public enum Kind: Int32, Sendable {
        case unknown = 0
        case text = 1
        case url = 2
        case address = 3
        case phoneNumber = 4
    }

    public var title: String
    public var kind: Kind
    public var payloadID: Int64
    public var size: Int64
    public var id: Int64

    public init(title: String, kind: Kind, payloadID: Int64, size: Int64, id: Int64) {
        self.title = title
        self.kind = kind
        self.payloadID = payloadID
        self.size = size
        self.id = id
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        self.init(title: "", kind: .unknown, payloadID: 0, size: 0, id: 0)
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 2: title = try field.string()
            case 3: kind = Kind(rawValue: try field.int32()) ?? .unknown
            case 4: payloadID = try field.int64()
            case 5: size = try field.int64()
            case 6: id = try field.int64()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.string(2, title)
        writer.int32(3, kind.rawValue)
        writer.int64(4, payloadID)
        writer.int64(5, size)
        writer.int64(6, id)
    }
}
