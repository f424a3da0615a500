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
}
