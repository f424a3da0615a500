import HexCommandLine

/// hexd's own options, named once: `DaemonConfiguration.options` lists them by these keys and
/// `resolve` reads them by the same keys, so that a misspelt option is a compile error.
extension OptionKey {
    static let accept = OptionKey("accept")
    static let config = OptionKey("config")
    static let dataDirectory = OptionKey("data-dir")
    static let generateManual = OptionKey("generate-manual")
    static let help = OptionKey("help")
    static let legacy = OptionKey("legacy")
    static let logFormat = OptionKey("log-format")
    static let logLevel = OptionKey("log-level")
    static let displayName = OptionKey("name")
    static let outboxTTL = OptionKey("outbox-ttl")
    static let port = OptionKey("port")
    static let version = OptionKey("version")
}
