/// The secure channel's envelope (securemessage.proto): the header and body, signed with HMAC-SHA256.
public struct SecureMessage: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    /// A view of the message read (large: a payload's chunk is in it).
    public var headerAndBody: ArraySlice<UInt8>
    public var signature: [UInt8]

    public init(headerAndBody: ArraySlice<UInt8>, signature: [UInt8]) {
        self.headerAndBody = headerAndBody
        self.signature = signature
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        headerAndBody = []
        signature = []
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: headerAndBody = try field.byteView()
            case 2: signature = try field.bytes()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.bytes(1, headerAndBody)
        writer.bytes(2, signature)
    }
}

/// `HeaderAndBody`: how the body was sealed, and the sealed body.
public struct SecureHeaderAndBody: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    /// `SigScheme.HMAC_SHA256` and `EncScheme.AES_256_CBC`.
    static let hmacSHA256: Int32 = 1
    static let aes256CBC: Int32 = 2
    /// `GcmMetadata{type: DEVICE_TO_DEVICE_MESSAGE (13), version: 1}` (securegcm.proto), which every
    /// implementation puts in the header's public metadata.
    static let deviceToDeviceMetadata: [UInt8] = {
        var writer = ProtobufWriter()
        writer.int32(1, 13)
        writer.int32(2, 1)
        return writer.bytes
    }()

    public var signatureScheme: Int32
    public var encryptionScheme: Int32
    public var iv: [UInt8]
    public var publicMetadata: [UInt8]
    /// A view of the message read (large: a payload's chunk is in it).
    public var body: ArraySlice<UInt8>

    /// A header and body as the secure channel seals them.
    public init(iv: [UInt8], body: ArraySlice<UInt8>) {
        signatureScheme = Self.hmacSHA256
        encryptionScheme = Self.aes256CBC
        self.iv = iv
        publicMetadata = Self.deviceToDeviceMetadata
        self.body = body
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        signatureScheme = 0
        encryptionScheme = 0
        iv = []
        publicMetadata = []
        body = []
        var header: ArraySlice<UInt8> = []
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: header = try field.byteView()
            case 2: body = try field.byteView()
            default: break
            }
        }
        var reader = ProtobufReader(header)
        while let field = try reader.field() {
            switch field.number {
            case 1: signatureScheme = try field.int32()
            case 2: encryptionScheme = try field.int32()
            case 5: iv = try field.bytes()
            case 6: publicMetadata = try field.bytes()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        var header = ProtobufWriter()
        header.int32(1, signatureScheme)
        header.int32(2, encryptionScheme)
        header.bytes(5, iv)
        header.bytes(6, publicMetadata)
        writer.bytes(1, header.bytes)
        writer.bytes(2, body)
    }
}

/// `DeviceToDeviceMessage`: one offline frame and its sequence number, inside the sealed body.
public struct DeviceToDeviceMessage: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    /// A view of the message read (large: a payload's chunk is in it).
    public var message: ArraySlice<UInt8>
    public var sequenceNumber: Int32

    public init(message: ArraySlice<UInt8>, sequenceNumber: Int32) {
        self.message = message
        self.sequenceNumber = sequenceNumber
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        message = []
        sequenceNumber = 0
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: message = try field.byteView()
            case 2: sequenceNumber = try field.int32()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.bytes(1, message)
        writer.int32(2, sequenceNumber)
    }
}
