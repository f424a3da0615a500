/// An HTTP/1.x request as `HTTPRequestReader` parsed it: nothing in it has been trusted yet.
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `POST`, …, as sent (methods are case-sensitive).
    public var method: String
    /// The target's path, as sent (not percent-decoded: routes are matched exactly).
    public var path: String
    /// The target's query parameters, percent-decoded; the first of a repeated name wins.
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(
        method: String, path: String, query: [String: String] = [:], headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// A request's header fields, in the order sent; names compare without regard to case.
public struct HTTPHeaders: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        /// Lowercased.
        public let name: String
        public let value: String
    }

    public private(set) var fields: [Field] = []

    public init(_ pairs: [(String, String)] = []) {
        for (name, value) in pairs { append(name: name, value: value) }
    }

    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name.lowercased(), value: value))
    }

    /// The first value of the field `name`, if any.
    public subscript(_ name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name == lowered }?.value
    }

    /// How many times the field `name` was sent.
    public func count(of name: String) -> Int {
        let lowered = name.lowercased()
        return fields.reduce(0) { $0 + ($1.name == lowered ? 1 : 0) }
    }
}
