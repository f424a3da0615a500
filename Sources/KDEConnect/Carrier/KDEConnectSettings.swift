import HexCarrier
import HexCommandLine
import HexKit
import KDEConnectCore

/// Whether hexd is a KDE Connect device (`--kdeconnect`), and on which port. Each option is
/// declared once, in `declared`.
public struct KDEConnectSettings: CarrierSettings, Hashable {
    /// On by default: hexd is found by KDE Connect devices, finds them, pairs with them as its
    /// person says, and exchanges links, texts and files with the paired ones.
    public var enabled = true
    /// The UDP port of identity broadcasts, and the first TCP port hexd tries for links (then the
    /// next free one up to 1764, as the apps do).
    public var port = KDEConnectIdentity.port
    /// Whether a hex goes to a KDE Connect device as one `url` share per link (each opens on the
    /// device), after its description as a `text`, rather than as one `text`.
    public var eachLink = false

    public init() {}

    public static let declared: [Setting<KDEConnectSettings>] = [
        Setting(
            "kdeconnect", value: "on|off",
            help:
                "Be a KDE Connect device (protocol 7 and 8): broadcast hexd's identity where beacons go (--broadcast, "
                + "--interface), publish and browse _kdeconnect._udp with --mdns, keep a TLS link with each KDE "
                + "Connect device heard or found, list them in hexctl peers, pair "
                + "with them as you say (hexctl pair), and exchange links, texts and files with the paired ones. "
                + "Default: on.",
            expected: "on or off", \.enabled
        ) { ["on": true, "off": false][$0] },
        Setting(
            "kdeconnect-port", value: "port",
            help: "KDE Connect's UDP port, and the first TCP port hexd tries for links (then the next free one). "
                + "Default: 1716.",
            expected: "a port from 1716 to 1764 (the apps drop a device announcing another)", \.port
        ) { UInt16($0).flatMap { KDEConnectIdentity.tcpPorts.contains($0) ? $0 : nil } },
        Setting(
            "kdeconnect-each-link", value: "on|off",
            help:
                "Send a hex to a KDE Connect device as one URL per link, each of which the device opens (after the "
                + "description as a text), instead of one text with the description and the links. A hex of one link "
                + "and no description goes as that URL either way. Default: off.",
            expected: "on or off", \.eachLink
        ) { ["on": true, "off": false][$0] },
    ]
}
