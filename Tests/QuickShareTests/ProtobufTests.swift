import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ProtobufTests {
    private func fields(_ bytes: [UInt8]) throws -> [ProtobufField] {
        var reader = ProtobufReader(bytes[...])
        var fields: [ProtobufField] = []
        while let field = try reader.field() { fields.append(field) }
        return fields
    }

    @Test func aNegativeInt32TakesTenBytesAndReadsBack() throws {
        var writer = ProtobufWriter()
        writer.int32(1, -2)
        #expect(writer.bytes.count == 11)
        #expect(try fields(writer.bytes).first?.int32() == -2)
    }

    @Test func fieldsOfEveryWireTypeReadBack() throws {
        var writer = ProtobufWriter()
        writer.uint64(1, 300)
        writer.bytes(2, [1, 2, 3])
        writer.string(3, "hé")
        writer.packed(4, [5, 6, 150])
        let read = try fields(writer.bytes + [0x2D, 1, 0, 0, 0, 0x31, 2, 0, 0, 0, 0, 0, 0, 0])
        #expect(read.map(\.number) == [1, 2, 3, 4, 5, 6])
        #expect(try read[0].uint64() == 300)
        #expect(try read[1].bytes() == [1, 2, 3])
        #expect(try read[2].string() == "hé")
        #expect(try read[3].packedVarints(atMost: 3) == [5, 6, 150])
        #expect(read[4].value == .fixed32(1))
        #expect(read[5].value == .fixed64(2))
        #expect(throws: ProtobufError.self) { try read[3].packedVarints(atMost: 2) }
        #expect(throws: ProtobufError.self) { try read[0].bytes() }
        #expect(throws: ProtobufError.self) { try read[1].uint64() }
    }

    @Test(
        arguments: [
            [0x08],  // a key with no value
            [0x08, 0x80],  // a varint cut short
            [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01],  // a varint of eleven bytes
            [0x12, 0x05, 1, 2],  // a length past the end
            [0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],  // a length of 4 GiB
            [0x00, 0x01],  // field number 0
            [0x0B, 0x0C],  // a group
            [0x0D, 1, 2],  // a fixed32 cut short
        ] as [[UInt8]])
    func malformedBytesAreRefused(_ bytes: [UInt8]) {
        #expect(throws: ProtobufError.self) { try fields(bytes) }
    }

    @Test func aStringThatIsNotUTF8IsRefused() throws {
        let read = try fields([0x0A, 0x02, 0xC3, 0x28])
        #expect(throws: ProtobufError.self) { try read[0].string() }
    }

    @Test func framesRoundTrip() throws {
        let request = OfflineFrame.connectionRequest(
            .init(
                endpointID: "ABCD", endpointInfo: [6] + [UInt8](repeating: 7, count: 16), mediums: [5],
                keepAliveIntervalMillis: 5000, keepAliveTimeoutMillis: 30000))
        #expect(try OfflineFrame(protobuf: request.protobuf) == request)
        let chunk = OfflineFrame.payloadTransfer(
            PayloadTransfer(payloadID: -5, kind: .file, totalSize: 10, flags: 1, offset: 10, body: []))
        #expect(try OfflineFrame(protobuf: chunk.protobuf) == chunk)
        let response = OfflineFrame.connectionResponse(.init(accepted: true))
        #expect(try OfflineFrame(protobuf: response.protobuf) == response)
        let introduction = SharingFrame.introduction(
            Introduction(
                files: [FileMetadata(name: "a.jpg", payloadID: 7, size: 3, mimeType: "image/jpeg", id: 8)],
                texts: [TextMetadata(title: "x", kind: .url, payloadID: 9, size: 4, id: 10)]))
        #expect(try SharingFrame(protobuf: introduction.protobuf) == introduction)
        for frame in [SharingFrame.response(.accept), .pairedKeyResult(.unable), .cancel] {
            #expect(try SharingFrame(protobuf: frame.protobuf) == frame)
        }
        #expect(try OfflineFrame(protobuf: OfflineFrame.other(type: 4).protobuf) == .other(type: 4))
    }

    @Test func anIntroductionOfTooManyAttachmentsIsCountedNotRead() throws {
        let text = TextMetadata(title: "", kind: .text, payloadID: 1, size: 1, id: 1)
        let many = Introduction(texts: Array(repeating: text, count: Introduction.maximumAttachments + 2))
        let read = try Introduction(protobuf: many.protobuf)
        #expect(read.texts.count == Introduction.maximumAttachments)
        #expect(read.excess == 2)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct FrameDecoderTests {
    @Test func framesAreCutAtAnyBoundaryAndAnOversizedOneIsRefusedByItsLength() throws {
        let stream = FrameDecoder.framed([1, 2, 3]) + FrameDecoder.framed([]) + FrameDecoder.framed([4])
        for split in 0...stream.count {
            var decoder = FrameDecoder(maximumFrameBytes: 8)
            let frames = try decoder.feed(stream[..<split]) + decoder.feed(stream[split...])
            #expect(frames == [[1, 2, 3], [], [4]])
        }
        var decoder = FrameDecoder(maximumFrameBytes: 8)
        #expect(throws: QuickShareError.self) { try decoder.feed([0, 0, 0, 9]) }
        var huge = FrameDecoder(maximumFrameBytes: 5 << 20)
        #expect(throws: QuickShareError.self) { try huge.feed([0xFF, 0xFF, 0xFF, 0xFF]) }
    }
}
