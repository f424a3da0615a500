import HexCommandLine
import HexKit
import HexNet
import Testing

@testable import HexDaemon

@Suite(.timeLimit(.minutes(5))) struct DaemonConfigurationTests {
    private func resolve(_ arguments: [String], environment: [String: String] = [:], file: String? = nil) throws
        -> DaemonConfiguration
    {
        guard
            case .run(let configuration) = try DaemonConfiguration.resolve(
                arguments: arguments, environment: environment,
                readFile: { $0.hasSuffix("hexd.conf") || $0 == "/etc/custom.conf" ? file : nil })
        else { throw UsageError("not a run") }
        return configuration
    }

    @Test func defaults() async throws {
        let configuration = try resolve([], environment: ["HOME": "/home/u"])
        #expect(configuration.dataDirectory.path == "/home/u/.local/share/hexd")
        #expect(configuration.tcpPort == 18521 && configuration.discovery.port == 18520)
        #expect(
            configuration.discovery.broadcastAddresses.isEmpty && configuration.discovery.staticPeerEndpoints.isEmpty)
        #expect(
            configuration.discovery.announceInterval == .seconds(2) && configuration.wire.maximumLineLength == 16 << 20)
        #expect(
            configuration.wire.appVersion == "2.0.0" && !configuration.wire.legacy && configuration.logLevel == .info)
    }

    /// Interfaces to announce on are named by flags, repeated, or comma-separated in the environment.
    @Test func theInterfacesToAnnounceOnComeFromFlagsAndTheEnvironment() throws {
        #expect(try resolve([]).discovery.interfaces == NetworkInterfaces.Selection())
        let chosen = try resolve(["--interface", "eth0", "--interface", "wlan0", "--exclude-interface", "docker*"])
        #expect(
            chosen.discovery.interfaces
                == NetworkInterfaces.Selection(including: ["eth0", "wlan0"], excluding: ["docker*"]))
        let fromEnvironment = try resolve([], environment: ["HEXD_EXCLUDE_INTERFACE": "docker*, veth?"])
        #expect(fromEnvironment.discovery.interfaces.excluding == ["docker*", "veth?"])
    }

    /// The store's settings are declared by the store (`StoreSettings.declared`) and read from
    /// every source like the rest: flags, then the environment, then the file.
    @Test func theStoreSettingsComeFromEverySource() throws {
        let defaults = try resolve([]).store
        #expect(defaults.budget == InboxBudget(inbox: 1 << 30, perSender: 32 << 20, strangers: 128 << 20))
        #expect(defaults.freeFloor.bytes(ofDiskSize: 100 << 30) == 2 * (100 << 30) / 100)
        #expect(defaults.freeFloor.bytes(ofDiskSize: 1 << 30) == 256 << 20, "the larger of 256 MiB and 2 %")
        #expect(defaults.hardFreeFloor.bytes(ofDiskSize: 1 << 30) == (1 << 30) / 100, "the smaller of 64 MiB and 1 %")
        let store = try resolve(
            ["--sender-budget", "1MiB", "--min-free", "5%"],
            environment: ["HEXD_STRANGERS_BUDGET": "2 GiB", "HEXD_SENDER_BUDGET": "3m"],
            file: "inbox-budget = 4096\nmin-free-hard = 10m\ndisk-reserve = 0\n"
                + "strangers-budget = 1k"
        ).store
        #expect(store.budget == InboxBudget(inbox: 4_096, perSender: 1 << 20, strangers: 2 << 30))
        #expect(store.freeFloor == .percent(5) && store.hardFreeFloor == .bytes(10 << 20) && store.reserve == 0)
        #expect(throws: UsageError.self) { try resolve(["--min-free", "101%"]) }
        #expect(throws: UsageError.self) { try resolve(["--inbox-budget", "2PiB"]) }
    }

    @Test func flagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsTheDefaults() async throws {
        let file = """
            # a comment
            port = 1000
            discovery-port = 2000
            name = From File
            broadcast = 10.0.0.255
            broadcast = 10.1.0.255   # repeatable
            legacy = yes
            """
        let environment = ["HEXD_DATA_DIR": "/d", "HEXD_PORT": "3000", "HEXD_PEER": "a.example, b.example:99"]
        let configuration = try resolve(["--port", "4000"], environment: environment, file: file)
        #expect(configuration.tcpPort == 4000, "flag")
        #expect(
            configuration.discovery.staticPeerEndpoints == [
                Endpoint(host: "a.example", port: 2000), Endpoint(host: "b.example", port: 99),
            ], "environment, comma-separated")
        #expect(
            configuration.discovery.port == 2000 && configuration.name == "From File" && configuration.wire.legacy,
            "file")
        #expect(configuration.discovery.broadcastAddresses.map(\.description) == ["10.0.0.255", "10.1.0.255"])
        #expect(try resolve([], environment: environment, file: file).tcpPort == 3000, "environment over file")
        #expect(try resolve(["--port=5000", "--legacy"], environment: [:]).tcpPort == 5000)
    }

    @Test func theAcceptPolicyIsAnyoneUnlessSaidAndNeedsKeys() throws {
        #expect(try resolve([], environment: ["HOME": "/home/u"]).accept == .anyone)
        #expect(try resolve(["--accept", "paired"], environment: ["HOME": "/home/u"]).accept == .paired)
        #expect(try resolve([], environment: ["HOME": "/home/u", "HEXD_ACCEPT": "known"]).accept == .known)
        #expect(throws: UsageError.self, "a policy it does not know") {
            try resolve(["--accept", "friends"], environment: ["HOME": "/home/u"])
        }
        #expect(throws: UsageError.self, "a legacy peer has no keys to check") {
            try resolve(["--legacy", "--accept", "known"], environment: ["HOME": "/home/u"])
        }
    }

    @Test func anExplicitConfigFileMustExist() async throws {
        #expect(throws: UsageError.self) { try resolve(["--config", "/nonexistent.conf"]) }
        #expect(try resolve(["--config", "/etc/custom.conf"], file: "port = 7").tcpPort == 7)
    }

    @Test(arguments: [
        "port = 70000", "nonsense", "colour = red", "port = 1\nport = 2", "announce-interval = -1", "legacy = maybe",
        "data-dir = /x",
    ])
    func aBadConfigFileIsAUsageErrorNamingTheLine(_ file: String) {
        #expect { try resolve([], environment: ["HEXD_DATA_DIR": "/d"], file: file) } throws: {
            "\($0)".hasPrefix("/d/hexd.conf")
        }
    }

    @Test func aStaticPeerTakesTheDiscoveryPortUnlessItNamesOneAndIPv6NeedsBrackets() throws {
        let configuration = try resolve([
            "--discovery-port", "4000", "--peer", "[fd00::2]", "--peer", "[fd00::3]:99", "--peer", "10.0.0.7",
        ])
        #expect(
            configuration.discovery.staticPeerEndpoints.map(\.description) == [
                "[fd00::2]:4000", "[fd00::3]:99", "10.0.0.7:4000",
            ])
        #expect { try resolve(["--peer", "fd00::2:99"]) } throws: { "\($0)".contains("(write [fd00::2:99])") }
    }

    @Test(arguments: [
        ["--port", "x"], ["--broadcast", "256.1.1.1"], ["--peer", ":1"], ["--peer", "fd00::2"],
        ["--log-level", "loud"], ["--max-line", "10"],
        ["--app-version", ""], ["--idle-timeout", "0"], ["--name"], ["--port", "1", "--port", "2"],
    ])
    func badFlagsAreUsageErrors(_ arguments: [String]) {
        #expect(throws: UsageError.self) { try resolve(arguments) }
    }

    @Test func theLinkCommandNeedsAPathPlaceholder() async throws {
        let configuration = try resolve([
            "--link-command", "tool link {path}", "--link-service", "Box", "--link-concurrency", "2", "--link-timeout",
            "1.5",
        ])
        #expect(configuration.links.command == "tool link {path}" && configuration.links.service == .box)
        #expect(configuration.links.concurrency == 2 && configuration.links.timeout == .milliseconds(1_500))
        #expect(try resolve([]).links.command == nil)
        #expect { try resolve(["--link-command", "tool link"]) } throws: {
            "\($0)".contains("a command containing {path}")
        }
        #expect(throws: UsageError.self) { try resolve(["--link-concurrency", "0"]) }
    }

    @Test func anErrorNamesWhereTheValueCameFrom() {
        #expect { try resolve([], environment: ["HEXD_PORT": "x"]) } throws: {
            "\($0)" == "HEXD_PORT needs a port from 0 to 65535, not 'x'"
        }
        #expect { try resolve(["--port", "x"]) } throws: { "\($0)" == "--port needs a port from 0 to 65535, not 'x'" }
    }

    @Test func helpAndVersionAreRequests() async throws {
        guard case .help = try DaemonConfiguration.resolve(arguments: ["-h"], environment: [:]) else {
            throw UsageError("not help")
        }
        guard case .version = try DaemonConfiguration.resolve(arguments: ["--version"], environment: [:]) else {
            throw UsageError("not version")
        }
    }

    /// The extremes every numeric setting is tried with: each is either refused as a usage error
    /// naming the setting, or taken as a value in the setting's range. None may trap.
    static let extremes = [
        "0", "-1", "1e300", "-1e300", "9223372036854775808", "18446744073709551616", "0.5", "2.5", "twelve", "", "nan",
        "inf",
    ]
    static let numericSettings = [
        "port", "discovery-port", "announce-interval", "max-line", "idle-timeout", "line-grace", "line-min-rate",
        "max-connections",
        "max-connections-per-address", "partial-line-budget", "max-links", "max-string", "max-peers", "beacon-rate",
        "link-concurrency", "link-timeout",
        "outbox-ttl", "inbox-budget", "sender-budget", "strangers-budget", "min-free", "min-free-hard", "disk-reserve",
        "on-receive-timeout", "on-receive-concurrency", "localsend-port", "kdeconnect-port", "quickshare-port",
    ]

    @Test(arguments: numericSettings)
    func everyNumericSettingRefusesOrBoundsItsExtremes(_ setting: String) throws {
        for value in Self.extremes {
            do {
                let configuration = try resolve(["--\(setting)", value])
                // Taken: only a value that is in range for its setting.
                let takesFractions =
                    setting.contains("interval")
                    || ["idle-timeout", "line-grace", "link-timeout", "on-receive-timeout"].contains(setting)
                #expect(
                    ["0", "2.5"].contains(value) || value == "0.5" && takesFractions,
                    "--\(setting) \(value) was taken")
                #expect(
                    configuration.discovery.announceInterval >= .milliseconds(100)
                        && configuration.inbound.idleTimeout > .zero
                        && configuration.discovery.maximumPeers >= 1)
            } catch let error as UsageError {
                #expect(error.description.contains("--\(setting)"), "the error names the setting: \(error)")
            }
        }
    }

    @Test func everyNumericOptionIsCovered() {
        let numericValues = ["port", "seconds", "bytes", "n", "size", "size|percent"]
        let numeric = DaemonConfiguration.options.filter { numericValues.contains($0.valueName ?? "") }.map(\.name)
        #expect(Set(numeric) == Set(Self.numericSettings))
    }
}
