import HexCarrier
import HexCommandLine

/// Whether hexd is a Quick Share device (`--quickshare`), on which port, whether files a phone
/// offers wait for the person, and whether it wakes phones by Bluetooth LE. Each option is declared
/// once, in `declared`.
public struct QuickShareSettings: CarrierSettings, Hashable {
    /// On by default: hexd is published as a Quick Share receiver, so an Android phone's share sheet
    /// lists it, and what a phone shares lands in the inbox and the downloads folder.
    public var enabled = true
    /// The TCP port hexd takes Quick Share connections on (published by DNS-SD, so any port works;
    /// a fixed one is what a firewall can open).
    public var port: UInt16 = 18525
    /// Whether files a phone offers land without asking the person first.
    public var takesFilesUnasked = false
    /// Whether hexd wakes phones nearby with a Bluetooth LE advertisement (through BlueZ) while a send
    /// to a Quick Share device waits: Android publishes itself as a receiver only after one.
    public var wakesPhones = true

    public init() {}

    public static let declared: [Setting<QuickShareSettings>] = [
        Setting(
            "quickshare", value: "on|off",
            help:
                "Be a Quick Share receiver (Android's share sheet, the Windows app): publish "
                + "_FC9F5ED42C8A._tcp by DNS-SD where hexd announces itself (--mdns), keep the links and texts "
                + "phones share as hexes, and the files they share in the downloads folder once you say yes "
                + "(hexctl pair --accept NAME; both screens show the same PIN). Default: on.",
            expected: "on or off", \.enabled
        ) { ["on": true, "off": false][$0] },
        Setting(
            "quickshare-port", value: "port",
            help: "The TCP port of Quick Share connections (DNS-SD tells phones which: a fixed one is for firewalls; "
                + "when it is taken, hexd takes another and publishes that). Default: 18525.",
            expected: "a port from 1 to 65535", \.port
        ) { UInt16($0).flatMap { $0 > 0 ? $0 : nil } },
        Setting(
            "quickshare-files", value: "ask|take",
            help: "Whether files a phone shares wait for your yes (ask) or land at once (take), under the accept "
                + "policy and the strangers' budgets either way. Default: ask.",
            expected: "ask or take", \.takesFilesUnasked
        ) { ["ask": false, "take": true][$0] },
        Setting(
            "quickshare-bluetooth", value: "on|off",
            help: "Wake phones nearby with a Bluetooth LE advertisement (through BlueZ on the system bus) while a "
                + "send to a Quick Share device waits, and for a minute after hexctl peers --refresh: Android lists "
                + "itself as a receiver only after one, or while its receive screen is open. hexd never switches an "
                + "adapter on. Default: on.",
            expected: "on or off", \.wakesPhones
        ) { ["on": true, "off": false][$0] },
    ]
}
