import HexWeb
import Testing

@Suite(.timeLimit(.minutes(5))) struct HTTPRequestReaderTests {
    private func read(_ text: String, bodyBytes: Int = 1_024, pieces: Int? = nil) -> HTTPRequestReader.Action {
        var reader = HTTPRequestReader(limits: .init(bodyBytes: bodyBytes))
        let bytes = Array(text.utf8)
        guard let pieces else { return reader.read(bytes) }
        var action = HTTPRequestReader.Action.needMore
        var offset = 0
        while offset < bytes.count, action == .needMore {
            action = reader.read(bytes[offset..<min(offset + pieces, bytes.count)])
            offset += pieces
        }
        return action
    }

    private func status(_ action: HTTPRequestReader.Action) -> Int? {
        if case .refuse(let status, _) = action { return status.code }
        return nil
    }

    @Test func aRequestSplitAnywhereReadsTheSame() throws {
        let text =
            "POST /control?x=1&token=a%20b+c&x=2 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 5\r\n"
            + "Origin:  http://127.0.0.1:9 \r\n\r\nhello"
        let whole = read(text)
        guard case .request(let request) = whole else {
            Issue.record("not read: \(whole)")
            return
        }
        #expect(request.method == "POST")
        #expect(request.path == "/control")
        #expect(request.query == ["x": "1", "token": "a b c"], "decoded; the first of a repeated name wins")
        #expect(request.headers["ORIGIN"] == "http://127.0.0.1:9", "names ignore case, values are trimmed")
        #expect(request.body == Array("hello".utf8))
        for pieces in [1, 2, 3, 7, 64] { #expect(read(text, pieces: pieces) == whole, "in pieces of \(pieces)") }
    }

    @Test func aStreamedPathStopsAtItsHeadWhateverItsBodysSize() {
        var limits = HTTPRequestReader.Limits(bodyBytes: 10)
        limits.streamedPaths = ["/upload"]
        var reader = HTTPRequestReader(limits: limits)
        let head = "POST /upload?sessionId=s HTTP/1.1\r\nHost: h\r\nContent-Length: 5000000000\r\n\r\n"
        let action = reader.read(Array((head + "first").utf8))
        guard case .head(let request, let framing, let received) = action else {
            Issue.record("not a head: \(action)")
            return
        }
        #expect(request.query["sessionId"] == "s" && request.body.isEmpty)
        #expect(
            framing == .length(5_000_000_000) && received == Array("first".utf8), "the body's bound is the caller's")
        var chunked = HTTPRequestReader(limits: limits)
        let streamed = chunked.read(
            Array("POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nfirst".utf8))
        #expect(streamed.isHead(framing: .chunked, received: Array("5\r\nfirst".utf8)), "as sent: its chunks")
        #expect(reader.read(Array("more".utf8)) == .needMore, "done: the caller reads the rest")
        var other = HTTPRequestReader(limits: limits)
        let elsewhere = other.read(Array("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n".utf8))
        #expect(status(elsewhere) == 413, "any other path keeps the bound")
    }

    @Test func bareLineFeedsAndHTTP10WithoutHostAreTaken() {
        guard case .request(let request) = read("GET / HTTP/1.0\n\n") else {
            Issue.record("not read")
            return
        }
        #expect(request.path == "/" && request.body.isEmpty)
    }

    @Test func aChunkedBodyIsReadWholeInAnyPieces() {
        let text =
            "POST /control HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\nA \r\n, chunked!\r\n0\r\nX-Trailer: dropped\r\n\r\n"
        let whole = read(text)
        guard case .request(let request) = whole else {
            Issue.record("not read: \(whole)")
            return
        }
        #expect(request.body == Array("hello, chunked!".utf8), "extensions and trailers ignored")
        for pieces in [1, 2, 3, 7, 64] { #expect(read(text, pieces: pieces) == whole, "in pieces of \(pieces)") }
        #expect(read(text.replacingOccurrences(of: "\r\n", with: "\n")) == whole, "bare line feeds too")
        #expect(read(String(text.dropLast(2))) == .needMore, "its trailer section not ended")
    }

    @Test func anUnfinishedRequestAsksForMore() {
        #expect(read("GET / HTTP/1.1\r\nHost: a\r\n") == .needMore)
        #expect(read("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab") == .needMore)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 17_000) + "\r\n\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 17_000), 431),
        ("GET /" + String(repeating: "a", count: 5_000) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        (
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n0\r\n\r\n",
            400
        ),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n801\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nNo colon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\u{1}\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("\r\n\r\n", 400),
    ])
    func malformedOrOversizedRequestsAreRefusedWithTheirStatus(text: String, expected: Int) {
        #expect(status(read(text)) == expected)
        #expect(status(read(text, pieces: 5)) == expected)
    }

    @Test func manyHeaderFieldsAreRefused() {
        let fields = (0..<70).map { "X-\($0): y\r\n" }.joined()
        #expect(status(read("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n")) == 431)
    }

    @Test func aReaderHoldsNoMoreThanAHeadAndABody() {
        var reader = HTTPRequestReader(limits: .init(bodyBytes: 8))
        let head = Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 8\r\n\r\n".utf8)
        // A body and a megabyte more in one read: the request is the body, the rest never held.
        let action = reader.read(head + Array(repeating: UInt8(ascii: "z"), count: 1 << 20))
        guard case .request(let request) = action else {
            Issue.record("not read")
            return
        }
        #expect(request.body.count == 8)
        #expect(reader.read(Array("GET / HTTP/1.1\r\n\r\n".utf8)) == .needMore, "a reader reads one request")
    }
}

extension HTTPRequestReader.Action {
    /// Whether this is the head of a streamed request, its body coming as `framing`, with `received`.
    fileprivate func isHead(framing expected: HTTPRequestReader.BodyFraming, received expectedBytes: [UInt8]) -> Bool {
        if case .head(_, let framing, let received) = self {
            framing == expected && received == expectedBytes
        } else {
            false
        }
    }
}
