import HexCarrier
import HexCommandLine
import HexKit
import LocalSendCore

/// Whether hexd is a LocalSend device (`--localsend`), and on which port. Each option is declared
/// once, in `declared`.
public struct LocalSendSettings: CarrierSettings, Hashable {
    public var enabled = true
    /// LocalSend's multicast port, and the TCP port hexd's HTTPS API takes when it is free (else
    /// the next free one, announced as such).
    public var port = LocalSendDevice.defaultPort
    /// The PIN a LocalSend device must give to send hexd anything; nil asks none.
    public var pin: String?
    /// Whether hexd sends to LocalSend devices whose encryption is off, over plain HTTP.
    public var sendsPlainHTTP = false

    public init() {}

    public static let declared: [Setting<LocalSendSettings>] = [
        Setting(
            "localsend", value: "on|off",
            help: "Be a LocalSend device: appear in the LocalSend apps on the LAN, list the LocalSend devices whose "
                + "certificates hexd proved in hexctl peers, keep the notes and links they send as hexes and the "
                + "files they send in the downloads folder (--downloads), and send them hexes (hexctl send --to). "
                + "Announced where beacons go (--broadcast, --interface). Default: on.",
            expected: "on or off", \.enabled
        ) { ["on": true, "off": false][$0] },
        Setting(
            "localsend-port", value: "port",
            help: "LocalSend's multicast port, and the TCP port of hexd's HTTPS API for it when that is free (else "
                + "the next free port, announced as such; a LocalSend app on this host keeps its own). Default: 53317.",
            expected: "a port from 1 to 65535", \.port
        ) { UInt16($0).flatMap { $0 > 0 ? $0 : nil } },
        Setting(
            "localsend-pin", value: "pin",
            help: "A PIN LocalSend devices must give to send hexd anything (the apps ask their person for it). "
                + "Three wrong ones from an address lock it out for 10 minutes; 30 from all addresses, everyone. "
                + "Put it in hexd.conf rather than on the command line, where other users can read it. Default: none.",
            expected: "1 to 64 characters, no spaces", \.pin
        ) { text in
            !text.isEmpty && text.utf8.count <= 64 && !text.contains(where: \.isWhitespace) ? .some(text) : nil
        },
        Setting(
            "localsend-http", value: "on|off",
            help: "Send to LocalSend devices whose encryption is off (they announce protocol http; hexctl peers "
                + "shows them with no key): what hexd sends them crosses the LAN as plain HTTP, readable by anyone "
                + "on it, to whoever answers at the device's address. They are listed either way. Default: off.",
            expected: "on or off", \.sendsPlainHTTP
        ) { ["on": true, "off": false][$0] },
    ]
}
