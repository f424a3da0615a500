import HexWeb
import Testing

@Suite(.timeLimit(.minutes(1))) struct ChunkedDecoderTests {
    /// The body `text` decodes to, fed in pieces of `pieces` bytes, with how many bytes were taken.
    private func decode(
        _ text: String, bodyBytes: Int64 = 1_024, pieces: Int = .max
    ) -> (body: [UInt8], taken: Int, finished: Bool, failure: ChunkedDecoder.Failure?) {
        var decoder = ChunkedDecoder(limits: .init(bodyBytes: bodyBytes))
        let bytes = Array(text.utf8)
        var body: [UInt8] = []
        var taken = 0
        var offset = 0
        while offset < bytes.count {
            let piece = Array(bytes[offset..<min(offset + pieces, bytes.count)])
            do throws(ChunkedDecoder.Failure) {
                taken += try decoder.feed(piece) { body.append(contentsOf: $0) }
            } catch {
                return (body, taken, decoder.isFinished, error)
            }
            offset += piece.count
        }
        return (body, taken, decoder.isFinished, nil)
    }

    @Test func chunksAreJoinedAndWhatFollowsTheBodyIsNotTaken() {
        let text = "4\r\nWiki\r\n7\r\npedia i\r\nB\r\nn \r\nchunks.\r\n0\r\n\r\nGET / HTTP/1.1"
        for pieces in [1, 2, 5, 1_000] {
            let read = decode(text, pieces: pieces)
            #expect(String(decoding: read.body, as: UTF8.self) == "Wikipedia in \r\nchunks.", "pieces of \(pieces)")
            #expect(read.finished && read.failure == nil)
            #expect(read.taken == text.utf8.count - "GET / HTTP/1.1".utf8.count, "the next request is left")
        }
    }

    @Test func sizesAreBoundedWhateverTheChunksClaim() {
        #expect(decode("401\r\n", bodyBytes: 1_024).failure == .tooLarge(1_024), "one chunk past the bound")
        #expect(decode("400\r\n", bodyBytes: 1_024).failure == nil, "one chunk at it")
        #expect(decode("200\r\n" + String(repeating: "a", count: 512) + "\r\n201\r\n").failure == .tooLarge(1_024))
        #expect(decode("FFFFFFFFFFFFFFFFFFFF\r\n").failure == .tooLarge(1_024), "no overflow")
        #expect(decode("0000000000000000000000001\r\na\r\n0\r\n\r\n").body == Array("a".utf8), "leading zeros")
        #expect(decode(String(repeating: "0", count: 1_100)).failure == .lineTooLong)
        #expect(decode("1;" + String(repeating: "x", count: 1_100)).failure == .lineTooLong, "extensions too")
        #expect(decode("0\r\n" + String(repeating: "X: y\r\n", count: 2_000)).failure == .lineTooLong, "trailers")
    }

    @Test(arguments: ["\r\n", ";x\r\n", " 5\r\n", "5 x\r\n", "-5\r\n", "5\r\nhelloX", "5\r\nhello\r\r\n"])
    func malformedBodiesAreRefused(_ text: String) {
        guard case .malformed? = decode(text).failure else {
            Issue.record("\(text.debugDescription) was taken")
            return
        }
    }

    @Test func afterAFailureNothingMoreIsTaken() {
        var decoder = ChunkedDecoder(limits: .init(bodyBytes: 8))
        let bad = Array("zz\r\n".utf8)
        #expect(throws: ChunkedDecoder.Failure.self) { try decoder.feed(bad) { _ in } }
        let good = Array("1\r\na\r\n0\r\n\r\n".utf8)
        var body: [UInt8] = []
        let taken = try? decoder.feed(good) { body.append(contentsOf: $0) }
        #expect(taken == 0 && body.isEmpty && !decoder.isFinished)
    }
}
