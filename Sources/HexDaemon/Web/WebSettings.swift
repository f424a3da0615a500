import HexCommandLine
import HexNet

/// Where the inbox page is served (`hexd --web`). Each option is declared once, in `declared`.
public struct WebSettings: Sendable {
    /// A loopback address and port; port 0 picks a free one.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public var host: IPv4Address
        public var port: UInt16

        public init(host: IPv4Address, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// `127.0.0.1:18522` or `localhost:18522`; nil for anything but a loopback IPv4 address
        /// (the page is for the people at this machine, behind its token, never for the network).
        public init?(parsing text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
                return nil
            }
            let name = String(text[..<colon])
            guard let host = name == "localhost" ? .loopback : IPv4Address(name), host.description.hasPrefix("127.")
            else { return nil }
            self.init(host: host, port: port)
        }

        public var description: String { "\(host):\(port)" }
    }

    /// Nil: no page.
    public var address: Address? = Address(host: .loopback, port: 18_522)
    /// A request must arrive whole within this of its connection being accepted.
    public var requestDeadline: Duration = .seconds(10)
    /// Connections to the page at once (a browser opens a few, and keeps one for events); past
    /// it, the one that has waited longest without a whole request is closed for the newcomer.
    public var maximumConnections = 64

    public init() {}

    public static let declared: [Setting<WebSettings>] = [
        Setting(
            "web", value: "host:port|off",
            help: "Serve the inbox page here, on loopback only, behind a token (hexctl open); off for no page. "
                + "When the port is taken, hexd goes on without the page. Default: 127.0.0.1:18522.",
            expected: "a loopback HOST:PORT such as 127.0.0.1:18522, or off", \.address
        ) { text in
            text == "off" ? .some(nil) : Address(parsing: text).map { .some($0) }
        }
    ]
}
