extension HTTPRequest {
    /// The request as a client writes it: the request line (its path and its query, each value
    /// percent-encoded), `Host`, the request's own fields, `Content-Length` when it has a body or
    /// is a POST, `Connection: close` (one request per connection), then the body.
    /// - Parameter host: the `Host` field's value (`192.168.1.20:53317`, `[fd00::2]:53317`).
    public func serialized(host: String) -> [UInt8] {
        serializedHead(host: host, bodyLength: !body.isEmpty || method == "POST" ? body.count : nil) + body
    }

    /// The request's head alone, announcing a body of `bodyLength` bytes (none when nil) that the
    /// caller writes after it, as it reads it (a file's upload).
    public func serializedHead(host: String, bodyLength: Int?) -> [UInt8] {
        var target = path
        if !query.isEmpty {
            target +=
                "?"
                + query.sorted { $0.key < $1.key }.map {
                    Self.percentEncoded($0.key) + "=" + Self.percentEncoded($0.value)
                }
                .joined(separator: "&")
        }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for field in headers.fields where field.name != "host" && field.name != "content-length" {
            text += "\(field.name): \(field.value)\r\n"
        }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// Every byte but unreserved ones (RFC 3986: letters, digits, `-._~`) as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
