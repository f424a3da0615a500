/// The UKEY2 handshake's messages (google/ukey2 `ukey.proto`, as NearDrop's `ProtobufSource/ukey.proto`
/// has it). Each travels in a `UKEY2Message` naming its kind.
public struct UKEY2Message: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public enum Kind: Int32, Sendable {
        case alert = 1
        case clientInit = 2
        case serverInit = 3
        case clientFinish = 4
    }

    public var kind: Kind?
    public var data: [UInt8]

    public init(kind: Kind, data: [UInt8]) {
        self.kind = kind
        self.data = data
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        kind = nil
        data = []
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: kind = Kind(rawValue: try field.int32())
            case 2: data = try field.bytes()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        if let kind { writer.int32(1, kind.rawValue) }
        writer.bytes(2, data)
    }
}

/// The client's first message: its version, 32 random bytes, a commitment to its `ClientFinished`
/// per cipher it offers, and the protocol to run once the keys are agreed.
public struct UKEY2ClientInit: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    /// `Ukey2HandshakeCipher.P256_SHA512`, the one cipher Quick Share uses.
    public static let p256SHA512: Int32 = 100
    /// The secure channel every Quick Share implementation names.
    public static let nextProtocol = "AES_256_CBC-HMAC_SHA256"
    /// More cipher commitments than ukey.proto has ciphers is an attempt to make a reader work.
    static let maximumCommitments = 8

    public var version: Int32
    public var random: [UInt8]
    public var commitments: [(cipher: Int32, commitment: [UInt8])]
    public var nextProtocol: String

    public init(
        version: Int32, random: [UInt8], commitments: [(cipher: Int32, commitment: [UInt8])], nextProtocol: String
    ) {
        self.version = version
        self.random = random
        self.commitments = commitments
        self.nextProtocol = nextProtocol
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        version = 0
        random = []
        commitments = []
        nextProtocol = ""
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: version = try field.int32()
            case 2: random = try field.bytes()
            case 3:
                guard commitments.count < Self.maximumCommitments else {
                    throw ProtobufError("a ClientInit offers over \(Self.maximumCommitments) ciphers")
                }
                let commitment = try field.message(CipherCommitment.self)
                commitments.append((commitment.cipher, commitment.commitment))
            case 4: nextProtocol = try field.string()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.int32(1, version)
        writer.bytes(2, random)
        for (cipher, commitment) in commitments {
            writer.message(3, CipherCommitment(cipher: cipher, commitment: commitment))
        }
        writer.string(4, nextProtocol)
    }

    /// The commitment offered for P-256 with SHA-512, if any.
    public var p256Commitment: [UInt8]? {
        commitments.first { $0.cipher == Self.p256SHA512 }?.commitment
    }

    public static func == (one: Self, other: Self) -> Bool {
        one.version == other.version && one.random == other.random && one.nextProtocol == other.nextProtocol
            && one.commitments.map(\.cipher) == other.commitments.map(\.cipher)
            && one.commitments.map(\.commitment) == other.commitments.map(\.commitment)
    }

    private struct CipherCommitment: ProtobufEncodable, ProtobufDecodable {
        var cipher: Int32
        var commitment: [UInt8]

        init(cipher: Int32, commitment: [UInt8]) {
            self.cipher = cipher
            self.commitment = commitment
        }

        init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
            cipher = 0
            commitment = []
            try Self.forEachField(in: bytes) { field throws(ProtobufError) in
                switch field.number {
                case 1: cipher = try field.int32()
                case 2: commitment = try field.bytes()
                default: break
                }
            }
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.int32(1, cipher)
            writer.bytes(2, commitment)
        }
    }
}

/// The server's answer: its version, 32 random bytes, the cipher it chose and its public key.
public struct UKEY2ServerInit: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public var version: Int32
    public var random: [UInt8]
    public var cipher: Int32
    public var publicKey: [UInt8]

    public init(version: Int32, random: [UInt8], cipher: Int32, publicKey: [UInt8]) {
        self.version = version
        self.random = random
        self.cipher = cipher
        self.publicKey = publicKey
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        version = 0
        random = []
        cipher = 0
        publicKey = []
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            switch field.number {
            case 1: version = try field.int32()
            case 2: random = try field.bytes()
            case 3: cipher = try field.int32()
            case 4: publicKey = try field.bytes()
            default: break
            }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.int32(1, version)
        writer.bytes(2, random)
        writer.int32(3, cipher)
        writer.bytes(4, publicKey)
    }
}

/// The client's last message: its public key, which `ClientInit` committed to.
public struct UKEY2ClientFinished: Sendable, Equatable, ProtobufEncodable, ProtobufDecodable {
    public var publicKey: [UInt8]

    public init(publicKey: [UInt8]) {
        self.publicKey = publicKey
    }

    public init(protobuf bytes: ArraySlice<UInt8>) throws(ProtobufError) {
        publicKey = []
        try Self.forEachField(in: bytes) { field throws(ProtobufError) in
            if field.number == 1 { publicKey = try field.bytes() }
        }
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.bytes(1, publicKey)
    }
}

/// What one side tells the other before it gives up on a handshake.
public struct UKEY2Alert: Sendable, Equatable, ProtobufEncodable {
    /// `Ukey2Alert.AlertType`'s values.
    public enum Kind: Int32, Sendable {
        case badMessage = 1
        case badMessageType = 2
        case incorrectMessage = 3
        case badMessageData = 4
        case badVersion = 100
        case badRandom = 101
        case badHandshakeCipher = 102
        case badNextProtocol = 103
        case badPublicKey = 104
        case internalError = 200
    }

    public var kind: Kind

    public init(_ kind: Kind) {
        self.kind = kind
    }

    public func encode(to writer: inout ProtobufWriter) {
        writer.int32(1, kind.rawValue)
    }
}
