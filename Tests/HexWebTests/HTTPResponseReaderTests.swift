import HexWeb
import Testing

/// The reader of the answers hexd's own requests get: every framing a server may use, in pieces
/// of any size, and every bound held.
@Suite(.timeLimit(.minutes(1))) struct HTTPResponseReaderTests {
    private static func read(
        _ text: String, pieces: Int = 1, bodyBytes: Int = 1_000, closing: Bool = false, head: Bool = false
    ) -> HTTPResponseReader.Action {
        var reader = HTTPResponseReader(limits: .init(bodyBytes: bodyBytes), answeringHead: head)
        let bytes = Array(text.utf8)
        let size = max(1, pieces)
        var start = 0
        while start < bytes.count {
            let action = reader.read(bytes[start..<min(bytes.count, start + size)])
            if action != .needMore { return action }
            start += size
        }
        return closing ? reader.end() : .needMore
    }

    private static func body(_ action: HTTPResponseReader.Action) -> String? {
        guard case .response(let response) = action else { return nil }
        return String(decoding: response.body, as: UTF8.self)
    }

    @Test(arguments: [1, 3, 1_000])
    func everyFramingIsReadInPiecesOfAnySize(pieces: Int) {
        let sized = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}"
        #expect(Self.body(Self.read(sized, pieces: pieces)) == #"{"a":"bcd"}"#)
        let chunked =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "4;x=y\r\n{\"a\"\r\n7\r\n:\"bcd\"}\r\n0\r\nT: 1\r\n\r\n"
        #expect(Self.body(Self.read(chunked, pieces: pieces)) == #"{"a":"bcd"}"#)
        let untilClose = "HTTP/1.0 200 OK\r\n\r\nhello"
        #expect(Self.read(untilClose, pieces: pieces) == .needMore, "the body runs until the close")
        #expect(Self.body(Self.read(untilClose, pieces: pieces, closing: true)) == "hello")
        let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
        guard case .response(let response) = Self.read(interim, pieces: pieces) else {
            Issue.record("no response after the interim one")
            return
        }
        #expect(response.status == 204 && response.body.isEmpty)
    }

    @Test func fieldsAndStatusAreRead() throws {
        guard case .response(let response) = Self.read("HTTP/1.1 403 Forbidden\r\nX-A: b\r\nContent-Length: 0\r\n\r\n")
        else {
            Issue.record("no response")
            return
        }
        #expect(response.status == 403 && response.headers["x-a"] == "b")
        let head = Self.read("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", head: true)
        #expect(Self.body(head) == "", "an answer to HEAD has no body")
    }

    @Test(arguments: [
        "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nbad line\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
    ])
    func anUnreadableAnswerFails(_ text: String) {
        guard case .fail = Self.read(text) else {
            Issue.record("read: \(text.debugDescription)")
            return
        }
    }

    @Test func boundsHoldWhateverTheServerSends() {
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Padding: yes\r\n", count: 2_000)
        guard case .fail = Self.read(endless) else {
            Issue.record("a head past its bound was held")
            return
        }
        let manyChunks =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "1\r\nx\r\n", count: 1_001)
        guard case .fail = Self.read(manyChunks) else {
            Issue.record("chunks past the body's bound were held")
            return
        }
        guard case .fail = Self.read("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "x", count: 1_001), closing: true)
        else {
            Issue.record("a body until the close past its bound was held")
            return
        }
        #expect(Self.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", closing: true) != .needMore)
    }

    @Test func aRequestIsWrittenAsAClientWritesIt() {
        let request = HTTPRequest(
            method: "POST", path: "/api/localsend/v2/upload", query: ["sessionId": "a b", "fileId": "é"],
            headers: HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "99")]),
            body: Array("{}".utf8))
        let text = String(decoding: request.serialized(host: "127.0.0.1:53317"), as: UTF8.self)
        #expect(
            text
                == "POST /api/localsend/v2/upload?fileId=%C3%A9&sessionId=a%20b HTTP/1.1\r\nHost: 127.0.0.1:53317\r\n"
                + "content-type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        let get = HTTPRequest(method: "GET", path: "/api/localsend/v2/info")
        #expect(
            String(decoding: get.serialized(host: "h"), as: UTF8.self)
                == "GET /api/localsend/v2/info HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    }
}
