/// Reads one HTTP/1.x request from bytes as they arrive: a pure state machine (no sockets, no
/// clock), fed by the web server and fuzzed on its own. It never traps on what it is fed, and it
/// holds at most a head and a body within their limits, whatever a client sends.
///
/// It takes what a browser, a script or a LocalSend app sends: a request line in origin form,
/// header fields, and a body sized by `Content-Length` or sent chunked (`Transfer-Encoding:
/// chunked`, read by `ChunkedDecoder`). Everything else is refused with the status RFC 9110/9112
/// names: a head past its bound (431), a long target (414), a body past its bound (413), another
/// transfer coding (501), an HTTP version other than 1.0 and 1.1 (505), and any malformed line,
/// folded field, bare control character, conflicting length, `Content-Length` beside
/// `Transfer-Encoding` (which RFC 9112, 6.3, lets a server take, and which is how requests are
/// smuggled), a chunked body over HTTP/1.0, or missing or doubled `Host` (400). After `.request`,
/// `.head` (a path whose body the caller reads) or `.refuse` the reader is done; the server
/// answers and closes.
public struct HTTPRequestReader: Sendable {
    public struct Limits: Sendable {
        /// The request line and all header fields, with their line ends.
        public var headBytes = 16 * 1_024
        /// The request target alone.
        public var targetBytes = 4 * 1_024
        public var headerFields = 64
        public var bodyBytes: Int
        /// The paths whose bodies the caller reads itself, as they come (a file's upload): the
        /// reader stops after the head, and `bodyBytes` does not bound them.
        public var streamedPaths: Set<String> = []

        public init(bodyBytes: Int) {
            self.bodyBytes = bodyBytes
        }
    }

    /// What the server does next.
    public enum Action: Sendable, Equatable {
        /// Read more bytes.
        case needMore
        /// A whole request.
        case request(HTTPRequest)
        /// The head of a request to one of `streamedPaths`, its body empty: the body follows as
        /// `body` says, and `received` came with the head (as sent: chunked, its chunks). The caller
        /// reads the rest.
        case head(HTTPRequest, body: BodyFraming, received: [UInt8])
        /// Answer with this status and reason, and close.
        case refuse(HTTPStatus, String)
    }

    /// How a request's body comes.
    public enum BodyFraming: Sendable, Equatable {
        /// `Content-Length` bytes (0 when the request has neither field).
        case length(Int)
        /// `Transfer-Encoding: chunked`: its length is known at its end.
        case chunked
    }

    private enum State: Sendable {
        case head
        case body(HTTPRequest, length: Int)
        case chunkedBody(HTTPRequest, ChunkedDecoder)
        case done
    }

    public let limits: Limits
    private var state = State.head
    private var buffer: [UInt8] = []
    /// Where the search for the end of the head resumes.
    private var scanned = 0

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Takes the next bytes from the client.
    public mutating func read(_ bytes: some Collection<UInt8>) -> Action {
        switch state {
        case .done:
            return .needMore
        case .head:
            // At most a whole head and a whole body are held; anything past them is never needed.
            let room = limits.headBytes + 4 + limits.bodyBytes - buffer.count
            buffer.append(contentsOf: bytes.prefix(max(0, room)))
            let tooLarge = Action.refuse(
                .headerFieldsTooLarge,
                "the request head is larger than \(limits.headBytes) bytes")
            guard let (headEnd, bodyStart) = findHeadEnd() else {
                return buffer.count > limits.headBytes ? finish(tooLarge) : .needMore
            }
            guard headEnd <= limits.headBytes else { return finish(tooLarge) }
            let rest = Array(buffer[bodyStart...])
            let head = buffer[..<headEnd]
            buffer = []
            switch parseHead(head) {
            case .failure(let refusal):
                return finish(.refuse(refusal.status, refusal.reason))
            case .success(let (request, framing)):
                if limits.streamedPaths.contains(request.path) {
                    let received = if case .length(let length) = framing { Array(rest.prefix(length)) } else { rest }
                    return finish(.head(request, body: framing, received: received))
                }
                guard case .length(let length) = framing else {
                    state = .chunkedBody(request, ChunkedDecoder(limits: .init(bodyBytes: Int64(limits.bodyBytes))))
                    return readChunks(rest)
                }
                guard length <= limits.bodyBytes else {
                    return finish(.refuse(.contentTooLarge, "the body is larger than \(limits.bodyBytes) bytes"))
                }
                state = .body(request, length: length)
                return readBody(rest)
            }
        case .body:
            return readBody(Array(bytes))
        case .chunkedBody:
            return readChunks(Array(bytes))
        }
    }

    private mutating func readChunks(_ bytes: [UInt8]) -> Action {
        guard case .chunkedBody(var request, var decoder) = state else { return .needMore }
        do throws(ChunkedDecoder.Failure) {
            _ = try decoder.feed(bytes) { request.body.append(contentsOf: $0) }
        } catch {
            let status: HTTPStatus = if case .tooLarge = error { .contentTooLarge } else { .badRequest }
            return finish(.refuse(status, "\(error)"))
        }
        guard decoder.isFinished else {
            state = .chunkedBody(request, decoder)
            return .needMore
        }
        return finish(.request(request))
    }

    private mutating func readBody(_ bytes: [UInt8]) -> Action {
        guard case .body(var request, let length) = state else { return .needMore }
        let wanted = length - request.body.count
        request.body.append(contentsOf: bytes.prefix(wanted))
        guard request.body.count == length else {
            state = .body(request, length: length)
            return .needMore
        }
        // Bytes past the body (a pipelined request) are not read: the connection closes after the answer.
        return finish(.request(request))
    }

    private mutating func finish(_ action: Action) -> Action {
        state = .done
        buffer = []
        return action
    }

    /// The end of the head and the start of the body, once the blank line has arrived.
    private mutating func findHeadEnd() -> (Int, Int)? {
        HTTPHeadEnd.find(in: buffer, from: 0, scanned: &scanned)
    }

    private struct Refusal: Error {
        let status: HTTPStatus
        let reason: String

        init(_ status: HTTPStatus, _ reason: String) {
            self.status = status
            self.reason = reason
        }
    }

    private func parseHead(_ head: ArraySlice<UInt8>) -> Result<(HTTPRequest, BodyFraming), Refusal> {
        var lines = head.split(separator: .lineFeed, omittingEmptySubsequences: false).map { line in
            line.last == .carriageReturn ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return .failure(Refusal(.badRequest, "no request line")) }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: .space, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(Refusal(.badRequest, "the request line is not METHOD TARGET VERSION"))
        }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(\.isTokenCharacter) else {
            return .failure(Refusal(.badRequest, "the method is not a token"))
        }
        guard target.count <= limits.targetBytes else {
            return .failure(Refusal(.uriTooLong, "the target is longer than \(limits.targetBytes) bytes"))
        }
        guard target.first == .slash, target.allSatisfy(\.isTargetCharacter) else {
            return .failure(Refusal(.badRequest, "the target is not a path (origin form)"))
        }
        guard version.elementsEqual("HTTP/1.1".utf8) || version.elementsEqual("HTTP/1.0".utf8) else {
            return .failure(Refusal(.versionNotSupported, "only HTTP/1.1 and HTTP/1.0 are spoken"))
        }
        guard lines.count <= limits.headerFields else {
            return .failure(Refusal(.headerFieldsTooLarge, "more than \(limits.headerFields) header fields"))
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let first = line.first, first != .space, first != .tab else {
                return .failure(Refusal(.badRequest, "a folded or empty header line"))
            }
            guard let colon = line.firstIndex(of: .colon) else {
                return .failure(Refusal(.badRequest, "a header line without a colon"))
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(\.isTokenCharacter) else {
                return .failure(Refusal(.badRequest, "a header name that is not a token"))
            }
            let value = line[line.index(after: colon)...].trimmingWhitespace
            guard value.allSatisfy({ $0 == .tab || ($0 >= .space && $0 != 0x7F) }) else {
                return .failure(Refusal(.badRequest, "a control character in a header value"))
            }
            headers.append(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        let isHTTP11 = version.elementsEqual("HTTP/1.1".utf8)
        guard headers.count(of: "host") == 1 || (!isHTTP11 && headers.count(of: "host") == 0) else {
            return .failure(Refusal(.badRequest, "a request needs exactly one Host field"))
        }
        let lengths = Set(headers.fields.filter { $0.name == "content-length" }.map(\.value))
        let codings = headers.fields.filter { $0.name == "transfer-encoding" }.map(\.value)
        if !codings.isEmpty {
            guard codings.count == 1, codings[0].lowercased() == "chunked" else {
                return .failure(Refusal(.notImplemented, "the only transfer coding taken is chunked, alone"))
            }
            guard lengths.isEmpty else {
                return .failure(Refusal(.badRequest, "Content-Length beside Transfer-Encoding is refused"))
            }
            guard isHTTP11 else { return .failure(Refusal(.badRequest, "a chunked body needs HTTP/1.1")) }
        }
        var length = 0
        if let text = lengths.first {
            guard lengths.count == 1, !text.isEmpty, text.utf8.count <= 12, text.utf8.allSatisfy(\.isDigit),
                let parsed = Int(text)
            else {
                return .failure(Refusal(.badRequest, "Content-Length is not one decimal number"))
            }
            length = parsed
        }
        let (path, query) = Self.splitTarget(target)
        return .success(
            (
                HTTPRequest(
                    method: String(decoding: method, as: UTF8.self), path: path, query: query,
                    headers: headers), codings.isEmpty ? .length(length) : .chunked
            ))
    }

    /// The path and the decoded query parameters of an origin-form target.
    static func splitTarget(_ target: ArraySlice<UInt8>) -> (String, [String: String]) {
        guard let mark = target.firstIndex(of: .questionMark) else {
            return (String(decoding: target, as: UTF8.self), [:])
        }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: .ampersand) {
            let equals = pair.firstIndex(of: .equals) ?? pair.endIndex
            let name = percentDecoded(pair[..<equals])
            let value = equals == pair.endIndex ? "" : percentDecoded(pair[pair.index(after: equals)...])
            if query[name] == nil { query[name] = value }
        }
        return (String(decoding: target[..<mark], as: UTF8.self), query)
    }

    /// `+` as a space and `%XX` as its byte; a `%` not followed by two hex digits stays as it is.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == .plus {
                decoded.append(.space)
            } else if byte == .percent, bytes.distance(from: index, to: bytes.endIndex) >= 3,
                let high = bytes[index + 1].hexValue, let low = bytes[index + 2].hexValue
            {
                decoded.append(high << 4 | low)
                index += 2
            } else {
                decoded.append(byte)
            }
            index += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}

extension UInt8 {
    static let tab: UInt8 = 0x09
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let percent: UInt8 = 0x25
    static let ampersand: UInt8 = 0x26
    static let plus: UInt8 = 0x2B
    static let slash: UInt8 = 0x2F
    static let colon: UInt8 = 0x3A
    static let equals: UInt8 = 0x3D
    static let questionMark: UInt8 = 0x3F

    var isDigit: Bool { (0x30...0x39).contains(self) }

    var hexValue: UInt8? {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        case 0x61...0x66: self - 0x61 + 10
        default: nil
        }
    }

    /// RFC 9110's `tchar`: what a method or a field name is made of.
    var isTokenCharacter: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: "!#$%&'*+-.^_`|~".utf8.contains(self)
        }
    }

    /// Visible ASCII: what a request target may hold (anything else must be percent-encoded).
    var isTargetCharacter: Bool { (0x21...0x7E).contains(self) }
}

extension ArraySlice<UInt8> {
    /// Without leading and trailing spaces and tabs.
    var trimmingWhitespace: ArraySlice<UInt8> {
        let isWhitespace: (UInt8) -> Bool = { $0 == .space || $0 == .tab }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
