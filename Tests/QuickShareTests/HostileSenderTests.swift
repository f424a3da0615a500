import QuickShareCore
import Testing

/// A sender that does what Android would not: it speaks the handshake correctly, then sends frames
/// of its own making through the secure channel.
private struct HostileSender {
    var receiver: InboundConnection
    var channel: SecureChannel
    var replies: [InboundConnection.Action] = []

    init() throws {
        var receiver = InboundConnection(keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        var client = UKEY2Client(keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        let info = EndpointInfo(deviceType: .phone, name: "Mallory", random: [UInt8](repeating: 0, count: 16))
        _ = receiver.receive(
            OfflineFrame.connectionRequest(.init(endpointID: "EVIL", endpointInfo: info.bytes)).protobuf)
        guard case .send(let serverInit)? = receiver.receive(client.clientInit).first else {
            throw QuickShareError("no ServerInit")
        }
        let (finish, keys) = try client.finish(answering: serverInit)
        _ = receiver.receive(finish)
        _ = receiver.receive(OfflineFrame.connectionResponse(.init(accepted: true)).protobuf)
        channel = SecureChannel(keys: keys.channelKeys(as: .client))
        self.receiver = receiver
    }

    mutating func send(_ frame: OfflineFrame) throws {
        replies = receiver.receive(try channel.seal(frame.protobuf))
    }

    mutating func send(_ frame: SharingFrame, id: Int64 = 99) throws {
        try bytes(frame.protobuf, id: id)
    }

    mutating func bytes(_ bytes: [UInt8], id: Int64, totalSize: Int64? = nil) throws {
        let size = totalSize ?? Int64(bytes.count)
        try send(.payloadTransfer(.init(payloadID: id, kind: .bytes, totalSize: size, offset: 0, body: bytes[...])))
        try send(
            .payloadTransfer(
                .init(
                    payloadID: id, kind: .bytes, totalSize: size, flags: PayloadTransfer.lastChunkFlag,
                    offset: Int64(bytes.count), body: [])))
    }

    /// The paired-key exchange and an introduction, to the point where the receiver asks its person.
    mutating func introduce(_ introduction: Introduction) throws {
        try send(.pairedKeyEncryption(secretIDHash: [1], signedData: [2]))
        try send(.pairedKeyResult(.unable))
        try send(.introduction(introduction))
    }

    var closed: String? {
        replies.lazy.compactMap { action -> String? in
            if case .close(let reason) = action { return reason }
            return nil
        }.first
    }
}

@Suite(.timeLimit(.minutes(1)))
struct HostileSenderTests {
    private let file = FileMetadata(name: "a.bin", payloadID: 7, size: 4, mimeType: "application/octet-stream", id: 1)

    @Test func aFileChunkBeforeTheAnswerEndsTheConnection() throws {
        var sender = try HostileSender()
        try sender.introduce(Introduction(files: [file]))
        try sender.send(.payloadTransfer(.init(payloadID: 7, kind: .file, totalSize: 4, offset: 0, body: [1])))
        #expect(sender.closed == "a file payload that was not offered or accepted")
    }

    @Test func aFileLargerThanItsOfferEndsTheConnection() throws {
        var sender = try HostileSender()
        try sender.introduce(Introduction(files: [file]))
        sender.replies = sender.receiver.answer(accept: true)
        try sender.send(.payloadTransfer(.init(payloadID: 7, kind: .file, totalSize: 4, offset: 0, body: [1, 2, 3])))
        #expect(sender.closed == nil)
        try sender.send(.payloadTransfer(.init(payloadID: 7, kind: .file, totalSize: 4, offset: 3, body: [4, 5])))
        #expect(sender.closed == "a file is larger than its offer said")
    }

    @Test func aFileThatEndsShortOrOutOfOrderEndsTheConnection() throws {
        var short = try HostileSender()
        try short.introduce(Introduction(files: [file]))
        short.replies = short.receiver.answer(accept: true)
        try short.send(
            .payloadTransfer(
                .init(
                    payloadID: 7, kind: .file, totalSize: 4, flags: PayloadTransfer.lastChunkFlag, offset: 0, body: [1])
            ))
        #expect(short.closed == "a file ended short of its offer")
        var skipping = try HostileSender()
        try skipping.introduce(Introduction(files: [file]))
        skipping.replies = skipping.receiver.answer(accept: true)
        try skipping.send(.payloadTransfer(.init(payloadID: 7, kind: .file, totalSize: 4, offset: 2, body: [1])))
        #expect(skipping.closed == "a file's chunk is out of order")
    }

    @Test func aTextLargerThanTheLimitIsRefusedBeforeItIsHeld() throws {
        var sender = try HostileSender()
        let limit = Int64(sender.receiver.limits.textBytes)
        try sender.send(.payloadTransfer(.init(payloadID: 5, kind: .bytes, totalSize: limit + 1, offset: 0, body: [1])))
        #expect(sender.closed == "a bytes payload of \(limit + 1) bytes")
    }

    @Test func anOfferOfWiFiCredentialsIsAnsweredAsUnsupported() throws {
        var sender = try HostileSender()
        try sender.introduce(Introduction(otherAttachments: 1))
        #expect(sender.closed == "an offer of Wi-Fi credentials, apps or streams")
    }

    @Test func payloadsOpenedPastTheRoomForThemEndTheConnectionEmptyOnesToo() throws {
        var sender = try HostileSender()
        for id in 1...2 {
            try sender.send(
                .payloadTransfer(.init(payloadID: Int64(id), kind: .bytes, totalSize: 9, offset: 0, body: [])))
            #expect(sender.closed == nil)
        }
        try sender.send(.payloadTransfer(.init(payloadID: 3, kind: .bytes, totalSize: 9, offset: 0, body: [])))
        #expect(sender.closed == "over 2 bytes payloads under way at once")
    }

    @Test func aFilesBytesBeforeTheFileOfferedBeforeItEndTheConnection() throws {
        var sender = try HostileSender()
        let second = FileMetadata(name: "b.bin", payloadID: 8, size: 1, mimeType: "text/plain", id: 2)
        try sender.introduce(Introduction(files: [file, second]))
        sender.replies = sender.receiver.answer(accept: true)
        try sender.send(.payloadTransfer(.init(payloadID: 8, kind: .file, totalSize: 1, offset: 0, body: [1])))
        #expect(sender.closed == "a file's bytes came before the file offered before it")
    }

    @Test func anOfferWhoseSizesAddUpPastInt64IsRefused() throws {
        var sender = try HostileSender()
        let huge = FileMetadata(name: "b.bin", payloadID: 8, size: .max, mimeType: "text/plain", id: 2)
        try sender.introduce(Introduction(files: [file, huge]))
        #expect(sender.closed == "an offer hexd cannot take")
    }

    @Test func anOfferOfOverAThousandAttachmentsIsRefused() throws {
        var sender = try HostileSender()
        let files = (0...Introduction.maximumAttachments).map {
            FileMetadata(name: "f\($0)", payloadID: Int64($0), size: 1, mimeType: "text/plain", id: Int64($0))
        }
        try sender.introduce(Introduction(files: files))
        #expect(sender.closed == "an offer hexd cannot take")
    }

    @Test func anOfferWithRepeatedPayloadIDsIsRefused() throws {
        var sender = try HostileSender()
        try sender.introduce(
            Introduction(files: [file], texts: [TextMetadata(title: "t", kind: .text, payloadID: 7, size: 1, id: 2)]))
        #expect(sender.closed == "an offer hexd cannot take")
    }

    @Test func aReplayedFrameEndsTheConnection() throws {
        var sender = try HostileSender()
        let frame = try sender.channel.seal(OfflineFrame.keepAlive(.init(ack: true)).protobuf)
        #expect(sender.receiver.receive(frame).isEmpty)
        sender.replies = sender.receiver.receive(frame)
        #expect(sender.closed?.contains("sequence number") == true)
    }

    @Test func framesThatAreNotTheHandshakesEndTheConnectionBeforeAnyCrypto() throws {
        var receiver = InboundConnection(keyPair: try P256KeyPair(), random: try SecureRandom.bytes(32))
        #expect(receiver.receive([0x08, 0x02]) == [.close(reason: "the first frame is not a connection request")])
        #expect(receiver.receive([]) == [])
    }

    @Test func anEmptyLastChunkAtOffsetZeroEndsItsPayloadAsPyquickshareSendsIt() throws {
        var sender = try HostileSender()
        let frame = SharingFrame.pairedKeyEncryption(secretIDHash: [1], signedData: [2]).protobuf
        let size = Int64(frame.count)
        try sender.send(
            .payloadTransfer(.init(payloadID: 4, kind: .bytes, totalSize: size, offset: 0, body: frame[...])))
        try sender.send(
            .payloadTransfer(
                .init(
                    payloadID: 4, kind: .bytes, totalSize: size, flags: PayloadTransfer.lastChunkFlag, offset: 0,
                    body: [])))
        #expect(sender.closed == nil)
        #expect(sender.replies.count == 2, "the paired-key result, in two chunks: \(sender.replies)")
    }

    @Test func unexpectedSharingFramesAndStrayBytesAreIgnored() throws {
        var sender = try HostileSender()
        try sender.bytes([0xFF, 0xFF], id: 3)
        #expect(sender.replies.isEmpty)
        try sender.send(.response(.accept))
        #expect(sender.replies.isEmpty)
    }
}
