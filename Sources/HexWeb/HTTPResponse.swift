/// An answer to write: a status line, header fields and a body. Every answer closes its
/// connection (`Connection: close`): the page's requests are few and local, and one request per
/// connection keeps the server's states to two.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    /// Fields on every answer: nothing is cached, sniffed, framed, or sent on as a referrer.
    public static let commonHeaders: [(name: String, value: String)] = [
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Connection", "close"),
    ]

    public init(
        _ status: HTTPStatus, contentType: String? = nil, body: [UInt8] = [],
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.body = body
        self.headers = headers + (contentType.map { [("Content-Type", $0)] } ?? [])
    }

    /// A short plain-text answer, for refusals and errors.
    public static func text(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        HTTPResponse(status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
    }

    /// The status line and header fields, ending with the blank line, for a body of `length`
    /// bytes (nil: the body runs until the connection closes, as a stream does).
    public func head(length: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in Self.commonHeaders + headers { text += "\(name): \(value)\r\n" }
        if let length { text += "Content-Length: \(length)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The whole answer; `includingBody` is false for HEAD.
    public func serialized(includingBody: Bool = true) -> [UInt8] {
        head(length: body.count) + (includingBody ? body : [])
    }
}
