import HexCommandLine

/// Whether hexd is also found by DNS-SD over mDNS (`--mdns`). Each option is declared once, in
/// `declared`.
public struct DNSSDSettings: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable {
        /// Through Avahi when it is on the system bus, else with hexd's own responder; off when
        /// `--broadcast` names where beacons go, or when Avahi runs where the bus cannot reach it.
        case auto
        /// As `auto`, whatever `--broadcast` says.
        case on
        case off
    }

    public var mode = Mode.auto

    public init() {}

    public static let declared: [Setting<DNSSDSettings>] = [
        Setting(
            "mdns", value: "auto|on|off",
            help: "Be found by DNS-SD over mDNS as _hexd._tcp (avahi-browse, dns-sd -B), and find peers that way "
                + "too, beside the beacons (and KDE Connect devices as _kdeconnect._udp): through Avahi when it "
                + "is on the system bus (one mDNS stack per host), else with hexd's own responder on UDP 5353. "
                + "auto: unless --broadcast names where beacons go. Default: auto.",
            expected: "auto, on or off", \.mode
        ) { Mode(rawValue: $0) }
    ]
}
