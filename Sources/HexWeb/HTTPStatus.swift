/// The status codes hexd's page answers with.
public struct HTTPStatus: Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let reason: String

    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code) \(reason)" }

    public static let ok = HTTPStatus(200, "OK")
    public static let noContent = HTTPStatus(204, "No Content")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let lengthRequired = HTTPStatus(411, "Length Required")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    public static let unsupportedMediaType = HTTPStatus(415, "Unsupported Media Type")
    public static let misdirectedRequest = HTTPStatus(421, "Misdirected Request")
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}
