import HexCommandLine

/// Whether hexd is also found by DNS-SD over mDNS (`--mdns`). Each option is declared once, in
/// `declared`.
public struct DNSSDSettings: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable {
        /// Publish and browse with hexd's own responder unless another mDNS stack (Avahi) runs.
        case auto
        case on
        case off
    }

    public var mode = Mode.auto

    public init() {}

    public static let declared: [Setting<DNSSDSettings>] = [
        Setting("mdns", value: "auto|on|off",
                help: "Be found by DNS-SD over mDNS as _hexd._tcp (avahi-browse, dns-sd -B), and find peers that way "
                    + "too, beside the beacons. auto: unless Avahi runs on this host, where a second responder would "
                    + "make mDNS unreliable for every program, or --broadcast names where beacons go. Default: auto.",
                expected: "auto, on or off", \.mode) { Mode(rawValue: $0) },
    ]
}
