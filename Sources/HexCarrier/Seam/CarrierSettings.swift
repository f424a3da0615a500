import HexCommandLine

/// A carrier's settings: its options, declared once and read as every option of hexd's is (flag,
/// environment, config file), the one that turns it on or off first.
package protocol CarrierSettings: Sendable {
    /// The defaults.
    init()
    /// Its options, its switch (`--quickshare on|off`) first.
    static var declared: [Setting<Self>] { get }
    /// Whether the carrier runs.
    var enabled: Bool { get set }
}

/// Every carrier's settings, by their type (`table[QuickShareSettings.self]`): the daemon's
/// configuration holds them without naming any protocol. A carrier's settings never set are its
/// defaults.
package struct CarrierSettingsTable: Sendable {
    private var values: [ObjectIdentifier: any CarrierSettings] = [:]

    package init() {}

    package subscript<Settings: CarrierSettings>(_ type: Settings.Type) -> Settings {
        get { values[ObjectIdentifier(type)] as? Settings ?? Settings() }
        set { values[ObjectIdentifier(type)] = newValue }
    }
}
