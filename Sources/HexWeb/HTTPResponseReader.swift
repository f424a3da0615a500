/// Reads one HTTP/1.x response from bytes as they arrive: a pure state machine (no sockets, no
/// clock), for hexd's own requests to the devices of another protocol. It never traps on what it
/// is fed, and it holds at most a head and a body within their limits, whatever a server sends.
///
/// The body is sized by `Content-Length`, sent in chunks (`Transfer-Encoding: chunked`, trailers
/// read and dropped), or runs until the server closes (`end()`); a response to HEAD, a 1xx, 204
/// or 304 has none. An interim 1xx response is skipped.
public struct HTTPResponseReader: Sendable {
    public struct Limits: Sendable {
        /// The status line and all header fields, with their line ends.
        public var headBytes = 16 * 1_024
        public var headerFields = 64
        public var bodyBytes: Int

        public init(bodyBytes: Int) {
            self.bodyBytes = bodyBytes
        }
    }

    /// A whole response.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]
    }

    /// What the client does next.
    public enum Action: Sendable, Equatable {
        /// Read more bytes (or call `end()` when the server closed).
        case needMore
        case response(Response)
        /// The server's answer cannot be read: give up on it, and close.
        case fail(String)
    }

    private enum Framing: Sendable {
        case length(Int)
        case chunked
        case untilClose
    }

    private enum State: Sendable {
        case head
        case body(Response, Framing)
        case done
    }

    public let limits: Limits
    /// Whether the request was HEAD: the response then has no body, whatever its fields say.
    private let answersHead: Bool
    private var state = State.head
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` begin: what was taken is dropped now and then, not at
    /// every chunk, so that many small chunks cost linear time.
    private var position = 0
    /// Where the search for the end of the head resumes.
    private var scanned = 0
    /// Every byte taken so far, against the bound of the whole response.
    private var received = 0

    public init(limits: Limits, answeringHead: Bool = false) {
        self.limits = limits
        answersHead = answeringHead
    }

    /// Takes the next bytes from the server.
    public mutating func read(_ bytes: some Collection<UInt8>) -> Action {
        guard case .done = state else {
            // Chunk sizes and their line ends come besides the body: a bound of their own.
            let room = limits.headBytes + limits.bodyBytes + Self.framingAllowance - received
            guard bytes.count <= room else { return finish(.fail("the response is longer than allowed")) }
            received += bytes.count
            if position > 4_096 && position > buffer.count / 2 {
                buffer.removeSubrange(..<position)
                scanned = max(0, scanned - position)
                position = 0
            }
            buffer.append(contentsOf: bytes)
            return advance()
        }
        return .needMore
    }

    /// The server closed the connection: a body that runs until the close is whole; anything else
    /// cut short fails.
    public mutating func end() -> Action {
        switch state {
        case .body(let response, .untilClose): return finish(.response(response))
        case .done: return .needMore
        default: return finish(.fail("the server closed the connection before the response was whole"))
        }
    }

    /// Bytes of chunk framing allowed besides the body: a few per chunk, for a few thousand chunks.
    static let framingAllowance = 64 * 1_024

    private mutating func advance() -> Action {
        while true {
            switch state {
            case .done:
                return .needMore
            case .head:
                guard let (headEnd, bodyStart) = findHeadEnd() else {
                    return buffer.count - position > limits.headBytes
                        ? finish(.fail("the response head is larger than \(limits.headBytes) bytes")) : .needMore
                }
                guard headEnd - position <= limits.headBytes else {
                    return finish(.fail("the response head is larger than \(limits.headBytes) bytes"))
                }
                let head = buffer[position..<headEnd]
                switch parseHead(head) {
                case .failure(let unreadable):
                    return finish(.fail(unreadable.reason))
                case .success(let (response, framing)):
                    position = bodyStart
                    scanned = bodyStart
                    if (100..<200).contains(response.status) { continue }  // interim: the real one follows
                    guard let framing else { return finish(.response(response)) }
                    state = .body(response, framing)
                }
            case .body(var response, let framing):
                switch framing {
                case .length(let length):
                    guard buffer.count - position >= length else { return .needMore }
                    response.body = Array(buffer[position..<(position + length)])
                    return finish(.response(response))
                case .untilClose:
                    response.body.append(contentsOf: buffer[position...])
                    position = buffer.count
                    guard response.body.count <= limits.bodyBytes else {
                        return finish(.fail("the body is larger than \(limits.bodyBytes) bytes"))
                    }
                    state = .body(response, .untilClose)
                    return .needMore
                case .chunked:
                    switch readChunk(into: &response) {
                    case .needMore:
                        state = .body(response, .chunked)
                        return .needMore
                    case .chunk:
                        state = .body(response, .chunked)
                    case .last:
                        return finish(.response(response))
                    case .fail(let reason):
                        return finish(.fail(reason))
                    }
                }
            }
        }
    }

    private enum ChunkStep {
        case needMore, chunk, last
        case fail(String)
    }

    /// Takes one chunk from the buffer into the body; at the last (size 0) chunk, skips the
    /// trailer fields up to the blank line.
    private mutating func readChunk(into response: inout Response) -> ChunkStep {
        guard let lineEnd = buffer[position...].firstIndex(of: .lineFeed) else {
            return buffer.count - position > 1_024 ? .fail("a chunk size line is too long") : .needMore
        }
        var sizeText = buffer[position..<lineEnd]
        if sizeText.last == .carriageReturn { sizeText = sizeText.dropLast() }
        // Chunk extensions (`;name=value`) are allowed and ignored.
        let digits = sizeText.prefix { $0 != UInt8(ascii: ";") }.trimmingWhitespace
        guard !digits.isEmpty, digits.count <= 8,
            let size = digits.reduce(
                Int?(0),
                { total, digit in
                    guard let total, let value = digit.hexValue else { return nil }
                    return total * 16 + Int(value)
                })
        else { return .fail("a chunk size is not a hex number") }
        if size == 0 {
            // Trailer fields until a blank line.
            var index = lineEnd + 1
            while let end = buffer[index...].firstIndex(of: .lineFeed) {
                let line = buffer[index..<end]
                if line.isEmpty || line.elementsEqual([.carriageReturn]) { return .last }
                index = end + 1
            }
            return buffer.count - lineEnd > limits.headBytes ? .fail("the trailer is too long") : .needMore
        }
        guard response.body.count + size <= limits.bodyBytes else {
            return .fail("the body is larger than \(limits.bodyBytes) bytes")
        }
        let dataStart = lineEnd + 1
        // The chunk, then its CRLF (or bare LF).
        guard buffer.count >= dataStart + size + 1 else { return .needMore }
        var after = dataStart + size
        if buffer[after] == .carriageReturn {
            guard buffer.count >= after + 2 else { return .needMore }
            after += 1
        }
        guard buffer[after] == .lineFeed else { return .fail("a chunk does not end with a line end") }
        response.body.append(contentsOf: buffer[dataStart..<(dataStart + size)])
        position = after + 1
        return .chunk
    }

    private mutating func finish(_ action: Action) -> Action {
        state = .done
        buffer = []
        position = 0
        return action
    }

    /// The end of the head and the start of the body, once the blank line has arrived.
    private mutating func findHeadEnd() -> (Int, Int)? {
        HTTPHeadEnd.find(in: buffer, from: position, scanned: &scanned)
    }

    private struct Unreadable: Error {
        let reason: String

        init(_ reason: String) {
            self.reason = reason
        }
    }

    private func parseHead(_ head: ArraySlice<UInt8>) -> Result<(Response, Framing?), Unreadable> {
        var lines = head.split(separator: .lineFeed, omittingEmptySubsequences: false).map { line in
            line.last == .carriageReturn ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return .failure(Unreadable("no status line")) }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: .space, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].elementsEqual("HTTP/1.1".utf8) || parts[0].elementsEqual("HTTP/1.0".utf8),
            parts[1].count == 3, parts[1].allSatisfy(\.isDigit),
            let status = Int(String(decoding: parts[1], as: UTF8.self))
        else { return .failure(Unreadable("the status line is not HTTP/1.x CODE REASON")) }
        guard lines.count <= limits.headerFields else {
            return .failure(Unreadable("more than \(limits.headerFields) header fields"))
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let first = line.first, first != .space, first != .tab, let colon = line.firstIndex(of: .colon) else {
                return .failure(Unreadable("a header line that is folded, empty or without a colon"))
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(\.isTokenCharacter) else {
                return .failure(Unreadable("a header name that is not a token"))
            }
            let value = line[line.index(after: colon)...].trimmingWhitespace
            headers.append(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        let response = Response(status: status, headers: headers, body: [])
        if answersHead || (100..<200).contains(status) || status == 204 || status == 304 {
            return .success((response, nil))
        }
        if let coding = headers["transfer-encoding"] {
            guard coding.lowercased() == "chunked" else {
                return .failure(Unreadable("a transfer coding other than chunked"))
            }
            return .success((response, .chunked))
        }
        let lengths = Set(headers.fields.filter { $0.name == "content-length" }.map(\.value))
        guard let text = lengths.first else { return .success((response, .untilClose)) }
        guard lengths.count == 1, !text.isEmpty, text.utf8.count <= 12, text.utf8.allSatisfy(\.isDigit),
            let length = Int(text)
        else { return .failure(Unreadable("Content-Length is not one decimal number")) }
        guard length <= limits.bodyBytes else {
            return .failure(Unreadable("the body is larger than \(limits.bodyBytes) bytes"))
        }
        return .success((response, length == 0 ? nil : .length(length)))
    }
}
