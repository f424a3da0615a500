import HexCarrier
import HexCommandLine
import HexKit
import HexNet
import HexStore

/// Everything `hexd` can be told, resolved from flags, then the environment, then the config
/// file, then the defaults (the first that gives a value wins).
public struct DaemonConfiguration: Sendable {
    public var dataDirectory: DataDirectory
    /// Replaces the stored display name when given.
    public var name: String?
    public var tcpPort = DefaultPorts.envelopes
    /// Where hexd announces itself and how many peers it keeps.
    public var discovery = DiscoverySettings()
    public var logLevel = LogLevel.info
    public var logFormat = LogFormat.text
    /// Whose hexes and alerts are stored and shown.
    public var accept = AcceptPolicy.anyone
    /// How long an undelivered send stays in the outbox before it is given up.
    public var outboxLifetime: Duration = .seconds(7 * 86_400)
    /// How this daemon speaks with peers.
    public var wire = WireSettings()
    /// The budgets of peer connections.
    public var inbound = InboundSettings()
    /// The `command` link provider.
    public var links = LinkSettings()
    /// The inbox's budgets and the disk's floors.
    public var store = StoreSettings()
    /// The command run for each hex stored.
    public var receiveHook = ReceiveHookSettings()
    /// Where the inbox page is served.
    public var web = WebSettings()
    /// Whether desktop notifications are raised.
    public var notify = NotifySettings()
    /// How files are shared with peers and fetched from them.
    public var files = FileSettings()
    /// Whether hexd is also found, and finds peers, by DNS-SD.
    public var dnssd = DNSSDSettings()
    /// The settings of the carriers of other protocols (`carriers[QuickShareSettings.self]`), each
    /// declared by its carrier and wired in `ForeignCarrierStart.launches`.
    package var carriers = CarrierSettingsTable()
    /// The longest outbox lifetime `--outbox-ttl` takes: a year.
    public static let longestOutboxLifetime = 365.0 * 86_400

    public init(dataDirectory: DataDirectory) {
        self.dataDirectory = dataDirectory
    }

    /// The options of `hexd`. Each is also read from `HEXD_<NAME>` (dashes as underscores; a
    /// repeatable one comma-separated) and from `<name> = <value>` lines of the config file.
    public static let options: [Option] =
        [
            Option(
                .dataDirectory, value: "path",
                help: "Where hexd keeps its state. Default: $XDG_DATA_HOME/hexd, else ~/.local/share/hexd."),
            Option(.config, value: "path", help: "Config file. Default: <data-dir>/hexd.conf when it exists."),
            Option(
                .displayName, value: "name",
                help: "Display name sent with every hex (stored; kept until changed). "
                    + "Default on a first start: the host name."),
            Option(.port, value: "port", help: "TCP port for envelopes. Default: 18521."),
        ] + DiscoverySettings.declared.map(\.option) + [
            Option(
                .legacy,
                help: "Play a legacy 1.x peer: send only what the original app sent, never answer with an Ack."),
            Option(
                .accept, value: "policy",
                help:
                    "Whose hexes and alerts are taken. "
                    + "anyone (the default): a new key is pinned on first use, legacy peers too; "
                    + "known: only peers whose key is pinned already; paired: only peers paired with 'hexctl pair'."),
            Option(
                .outboxTTL, value: "seconds",
                help:
                    "How long an undelivered send is retried before it is given up (sendFailed). "
                    + "Default: 604800 (7 days)."
            ),
            Option(.logLevel, value: "level", help: "error, warning, info or debug. Default: info."),
            Option(
                .logFormat, value: "format",
                help: "text (for people), logfmt (key=value records) or json (an object per line). Default: text."),
        ] + WireSettings.declared.map(\.option) + InboundSettings.declared.map(\.option)
        + LinkSettings.declared.map(\.option)
        + StoreSettings.declared.map(\.option) + ReceiveHookSettings.declared.map(\.option)
        + WebSettings.declared.map(\.option) + NotifySettings.declared.map(\.option)
        + FileSettings.declared.map(\.option) + DNSSDSettings.declared.map(\.option) + carrierOptions + [
            Option(.version, help: "Show the version."),
            Option(.generateManual, help: "Print the man page, hexd(8), in troff."),
            Option(.help, short: "h", help: "Show this help."),
        ]

    /// The options of the carriers of other protocols, each carrier's together.
    private static let carrierOptions: [Option] = ForeignCarrierStart.launches.flatMap(\.options)

    /// What the command line asks for.
    public enum Request: Sendable {
        case help
        case version
        case manual
        case run(DaemonConfiguration)
    }

    /// Resolves the configuration.
    /// - Parameter readFile: reads the config file (injected so tests need no files).
    /// - Throws: `UsageError` for a wrong flag, environment variable or config line.
    public static func resolve(
        arguments: [String], environment: [String: String], readFile: (String) -> String? = Self.readFile
    ) throws(UsageError) -> Request {
        let parsed = try ParsedArguments(arguments, options: options)
        if parsed.flag(.help) { return .help }
        if parsed.flag(.version) { return .version }
        if parsed.flag(.generateManual) { return .manual }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }

        let dataDirectory = DataDirectory(explicit: parsed.value(.dataDirectory), environment: environment)
        let explicitFile = parsed.value(.config) ?? environment["HEXD_CONFIG"]
        let filePath = explicitFile ?? dataDirectory.configPath
        var fileValues: [String: [String]] = [:]
        if let text = readFile(filePath) {
            fileValues = try parseConfigFile(text, path: filePath)
        } else if let explicitFile {
            throw UsageError("cannot read the config file \(explicitFile)")
        }

        /// The values of an option from the first source that has any, with that source's name
        /// for error messages (`--port`, `HEXD_PORT`, `/path/hexd.conf: port`).
        func lookup(_ key: OptionKey) -> (values: [String], source: String)? {
            let name = key.name
            if let flagged = parsed.values[name] { return (flagged, "--\(name)") }
            let variable = "HEXD_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
            if let fromEnvironment = environment[variable], !fromEnvironment.isEmpty {
                let option = options.first { $0.name == name }
                let values =
                    option?.repeatable == true
                    ? fromEnvironment.split(separator: ",").map { String($0).trimmed } : [fromEnvironment]
                return (values, variable)
            }
            return fileValues[name].map { ($0, "\(filePath): \(name)") }
        }
        /// The last value of an option, parsed by `parse`; a failure names the source.
        func setting<T>(_ key: OptionKey, _ parse: (String) -> T?, expected: String) throws(UsageError) -> T? {
            guard let (values, source) = lookup(key), let text = values.last else { return nil }
            guard let value = parse(text) else { throw UsageError("\(source) needs \(expected), not '\(text)'") }
            return value
        }
        var configuration = DaemonConfiguration(dataDirectory: dataDirectory)
        configuration.name = lookup(.displayName)?.values.last
        configuration.tcpPort =
            try setting(.port, { UInt16($0) }, expected: "a port from 0 to 65535") ?? configuration.tcpPort
        try DiscoverySettings.declared.apply(to: &configuration.discovery, from: lookup)
        try WireSettings.declared.apply(to: &configuration.wire, from: lookup)
        if parsed.flag(.legacy) {
            configuration.wire.legacy = true
        } else {
            let truth = ["true": true, "yes": true, "1": true, "false": false, "no": false, "0": false]
            configuration.wire.legacy =
                try setting(.legacy, { truth[$0.lowercased()] }, expected: "true or false") ?? false
        }
        if configuration.wire.legacy && configuration.wire.plaintext == .refuse {
            throw UsageError(
                "--legacy plays a 1.x peer, which speaks only plaintext: it cannot go with --plaintext refuse")
        }
        configuration.accept =
            try setting(.accept, AcceptPolicy.init(rawValue:), expected: "paired, known or anyone")
            ?? configuration.accept
        if configuration.wire.legacy && configuration.accept != .anyone {
            throw UsageError(
                "--legacy plays a 1.x peer, which knows no keys: "
                    + "it cannot go with --accept \(configuration.accept.rawValue)"
            )
        }
        configuration.outboxLifetime =
            try setting(
                .outboxTTL,
                { Double($0).flatMap { Duration.seconds(validating: $0, in: 1...longestOutboxLifetime) } },
                expected: "seconds from 1 to \(Int(longestOutboxLifetime))") ?? configuration.outboxLifetime
        configuration.logLevel =
            try setting(.logLevel, LogLevel.init(rawValue:), expected: "error, warning, info or debug")
            ?? configuration.logLevel
        configuration.logFormat =
            try setting(.logFormat, LogFormat.init(rawValue:), expected: "text, logfmt or json")
            ?? configuration.logFormat
        try InboundSettings.declared.apply(to: &configuration.inbound, from: lookup)
        try LinkSettings.declared.apply(to: &configuration.links, from: lookup)
        try StoreSettings.declared.apply(to: &configuration.store, from: lookup)
        try ReceiveHookSettings.declared.apply(to: &configuration.receiveHook, from: lookup)
        try WebSettings.declared.apply(to: &configuration.web, from: lookup)
        try NotifySettings.declared.apply(to: &configuration.notify, from: lookup)
        try FileSettings.declared.apply(to: &configuration.files, from: lookup)
        try DNSSDSettings.declared.apply(to: &configuration.dnssd, from: lookup)
        for launch in ForeignCarrierStart.launches {
            try launch.read(&configuration.carriers, lookup)
        }
        return .run(configuration)
    }

    /// `name = value` lines; blank lines and `#` comments skipped; a repeatable key may repeat.
    static func parseConfigFile(_ text: String, path: String) throws(UsageError) -> [String: [String]] {
        var values: [String: [String]] = [:]
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }.trimmed
            guard !line.isEmpty else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw UsageError("\(path):\(number + 1): expected 'name = value'")
            }
            let key = line[..<equals].trimmed
            let value = line[line.index(after: equals)...].trimmed
            guard let option = options.first(where: { $0.name == key }),
                !["data-dir", "config", "help", "version", "generate-manual"].contains(key)
            else {
                throw UsageError("\(path):\(number + 1): unknown setting '\(key)'")
            }
            guard option.repeatable || values[key] == nil else {
                throw UsageError("\(path):\(number + 1): '\(key)' is set twice")
            }
            values[key, default: []].append(value)
        }
        return values
    }

    public static func readFile(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
