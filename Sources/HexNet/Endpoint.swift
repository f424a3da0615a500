/// A host and TCP or UDP port, as users write it: `HOST:PORT` (`192.168.1.20:18521`,
/// `laptop.local:18521`), an IPv6 address in brackets (`[fd00::2]:18521`), with its zone when it
/// is link-local (`[fe80::1%eth0]:18521`).
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// A name, an IPv4 address, or an IPv6 address (with `%zone`) without brackets.
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init(_ address: IPAddress, port: UInt16) {
        self.init(host: address.description, port: port)
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`; nil when there is no host or no port, the port is not
    /// 1–65535, the brackets hold no IPv6 address, or an IPv6 address is not in brackets (see
    /// `bracketed(_:)` for what to tell the user then).
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else {
            return nil
        }
        var host = text[..<colon]
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = host.dropFirst().dropLast()
            guard IPv6Address(String(host)) != nil else { return nil }
        } else {
            guard !host.isEmpty, !host.contains(":") else { return nil }
        }
        self.init(host: String(host), port: port)
    }

    /// For text that is an IPv6 address and port written without brackets (`fd00::2:18521`, which
    /// cannot be read unambiguously), the way to write it (`[fd00::2]:18521`); nil otherwise.
    public static func bracketed(_ text: String, defaultPort: UInt16) -> String? {
        guard !text.hasPrefix("["), text.filter({ $0 == ":" }).count >= 2 else { return nil }
        if IPv6Address(text) != nil { return "[\(text)]:\(defaultPort)" }
        guard let colon = text.lastIndex(of: ":"), UInt16(text[text.index(after: colon)...]) != nil,
            IPv6Address(String(text[..<colon])) != nil
        else { return nil }
        return "[\(text[..<colon])]\(text[colon...])"
    }

    /// The host as an IP address; nil for a name.
    public var address: IPAddress? { IPAddress(host) }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
