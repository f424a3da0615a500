/// A host and TCP or UDP port, as users write it: `HOST:PORT` (`192.168.1.20:18521`,
/// `laptop.local:18521`, `[::1]` is not supported: hexd speaks IPv4).
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; nil when there is no host, no port or the port is not 1–65535.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let host = String(text[..<colon])
        guard !host.isEmpty, !host.contains(":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { "\(host):\(port)" }
}
