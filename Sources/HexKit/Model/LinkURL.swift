/// What counts as a link's URL when a user or a script gives one (hexctl's arguments, the `url`
/// link provider): a URL with a scheme and a host (`https://example.com/a`), or a `file://` URL
/// with a path. One rule, so every way of making a link accepts the same URLs.
public enum LinkURL {
    /// The URL in `text`, or nil when it is not a link's URL.
    public static func parse(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else { return nil }
        if url.isFileURL { return url.path.isEmpty ? nil : url }
        guard let host = url.host(), !host.isEmpty else { return nil }
        return url
    }

    /// How a link made from `url` is described: the file's name, or the host.
    public static func description(of url: URL) -> String {
        url.isFileURL ? url.lastPathComponent : url.host() ?? ""
    }

    /// The `file://` URL of the absolute path `path`, every byte outside RFC 3986's unreserved
    /// characters and `/` percent-encoded.
    public static func file(path: String) -> String {
        let digits = Array("0123456789ABCDEF")
        var url = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                url += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
            }
        }
        return url
    }
}
