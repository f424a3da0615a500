import HexCommandLine

/// Whether hexd raises desktop notifications (`hexd --notify`). Each option is declared once, in
/// `declared`.
public struct NotifySettings: Sendable, Hashable {
    /// Nil: on when the environment names a session bus (`DBUS_SESSION_BUS_ADDRESS`).
    public var enabled: Bool?
    /// Hexes from one sender within this of each other share one notification, replaced as
    /// they come rather than stacked.
    public var foldWindow: Duration = .seconds(4)

    public init() {}

    public static let declared: [Setting<NotifySettings>] = [
        Setting(
            "notify", value: "on|off",
            help: "Raise a desktop notification (org.freedesktop.Notifications on the session D-Bus) for each "
                + "hex, alert and pairing request; hexes from one sender a few seconds apart share one. "
                + "Default: on when DBUS_SESSION_BUS_ADDRESS is set.",
            expected: "on or off", \.enabled
        ) { text in
            switch text {
            case "on": .some(true)
            case "off": .some(false)
            default: nil
            }
        }
    ]
}
