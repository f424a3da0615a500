import HexCarrier
import HexCommandLine
import HexKit
import HexNet
import HexTLS
import KDEConnectCarrier
import LocalSendCarrier
import QuickShareCarrier

/// Starts hexd's carriers of other protocols (LocalSend, KDE Connect, Quick Share) `delay` after hexd serves
/// its own peers, each on a thread of its own at the lowest priority (reading or making its
/// persona: what hexd serves goes first), puts each in its slot of `ForeignCarriers`, and runs
/// them. A carrier that cannot start (its persona's files unreadable, no port at all) is logged
/// and left off: hexd serves its own peers anyway.
struct ForeignCarrierStart: Sendable {
    let configuration: DaemonConfiguration
    /// This device's TLS, whose key claims the personas as hexd's; nil when playing a legacy peer,
    /// which speaks only the original app's protocol and has no carriers.
    let tls: TLSContext?
    let name: String
    let discovery: Discovery
    /// DNS-SD, for the carriers that publish and browse their own service types.
    let dnssd: DNSSDState
    let intake: Intake
    let downloads: IncomingFiles
    let gate: HandshakeGate
    let trimmer: MemoryTrimmer
    let events: EventLog
    let logger: Logger

    /// How long after hexd serves its own peers the carriers start.
    static let delay: Duration = .milliseconds(300)

    /// One carrier of another protocol: its kind, its options (the one that turns it on or off
    /// first) and how they are read into the configuration, whether the configuration has it on, and
    /// how it starts (reading or making its persona, taking its ports).
    struct Launch: Sendable {
        let kind: any Carrier.Type
        let options: [Option]
        /// Reads its options, from the first source that has each, into its settings.
        let read:
            @Sendable (inout CarrierSettingsTable, (OptionKey) -> (values: [String], source: String)?)
                throws(UsageError) -> Void
        let isOn: @Sendable (DaemonConfiguration) -> Bool
        let start: @Sendable (ForeignCarrierStart, PersonaClaims, Logger) throws -> any Carrier

        /// The option that turns it on or off (`--quickshare`), its settings' first; else its kind's name.
        var option: String { "--" + (options.first?.name ?? kind.kind.rawValue) }

        init<Settings: CarrierSettings>(
            _ kind: any Carrier.Type, _ settings: Settings.Type,
            start: @escaping @Sendable (ForeignCarrierStart, Settings, PersonaClaims, Logger) throws -> any Carrier
        ) {
            self.kind = kind
            options = Settings.declared.map(\.option)
            read = { table, lookup throws(UsageError) in try Settings.declared.apply(to: &table[settings], from: lookup)
            }
            isOn = { $0.carriers[settings].enabled }
            self.start = { run, claims, logger in
                try start(run, run.configuration.carriers[settings], claims, logger)
            }
        }
    }

    /// The names a carrier's persona files would have in the data directory (`DataDirectory.persona`),
    /// for every carrier: one without a persona (Quick Share) has no such files, and none is looked for.
    static var personas: [String] { launches.map { $0.kind.kind.rawValue } }

    /// Registers the forms of every carrier's devices' IDs, so that hexd reads them (`canonicalPeerID`):
    /// before anything reads an ID, whether its carrier is on or not (a stored hex may name one).
    static func registerIDForms() { PeerIDForms.register(launches.flatMap { $0.kind.idForms }) }

    /// Every carrier of another protocol, in the order sending, trust and the lists ask them. A new
    /// protocol is one entry here.
    static let launches: [Launch] = [
        Launch(LocalSendCarrier.self, LocalSendSettings.self) { run, settings, claims, logger in
            let persona = run.configuration.dataDirectory.persona(LocalSendCarrier.kind.rawValue)
            return try LocalSendCarrier.start(
                settings, discovery: run.configuration.discovery, visibility: run.discovery,
                intake: run.intake, downloads: run.downloads,
                dataDirectory: .init(key: persona.key, certificate: persona.certificate),
                name: run.name, claims: claims, gate: run.gate, trimmer: run.trimmer, events: run.events, logger: logger
            )
        },
        Launch(KDEConnectCarrier.self, KDEConnectSettings.self) { run, settings, claims, logger in
            let persona = run.configuration.dataDirectory.persona(KDEConnectCarrier.kind.rawValue)
            return try KDEConnectCarrier.start(
                settings, discovery: run.configuration.discovery, name: run.name,
                keyPath: persona.key, certificatePath: persona.certificate, claims: claims,
                gate: run.gate, trimmer: run.trimmer, intake: run.intake, downloads: run.downloads,
                visibility: run.discovery, dnssd: run.dnssd, logger: logger)
        },
        Launch(QuickShareCarrier.self, QuickShareSettings.self) { run, settings, claims, logger in
            try QuickShareCarrier.start(
                settings, name: run.name, intake: run.intake, downloads: run.downloads,
                dnssd: run.dnssd, claims: claims, gate: run.gate, trimmer: run.trimmer, events: run.events,
                logger: logger)
        },
    ]

    /// The slots as they are before the start: starting when asked for, else off and why.
    static func slots(_ configuration: DaemonConfiguration) -> ForeignCarriers {
        let legacy = "a daemon playing a legacy peer speaks only the original app's protocol"
        return ForeignCarriers(
            launches.map { launch in
                let slot: ForeignCarriers.Slot =
                    configuration.wire.legacy
                    ? .off(legacy) : launch.isOn(configuration) ? .starting : .off("\(launch.option) off")
                return (launch.kind, slot)
            })
    }

    /// Starts the carriers `carriers` waits for, each put in its slot as soon as it is up, and runs
    /// them until cancelled.
    func run(into carriers: ForeignCarriers) async {
        guard let tls else { return }
        // hexd's own start goes first, with the cores to itself: its query, its two announcements
        // 150 ms apart and the answers they draw (started at once, the carriers cost two fresh
        // daemons listing each other a fifth more time: Tests/netns/defaults-bench.sh).
        do {
            try await Task.sleep(for: Self.delay)
        } catch {
            return
        }
        let claims = PersonaClaims(signer: tls.identity)
        await withTaskGroup(of: Void.self) { group in
            for launch in Self.launches where launch.isOn(configuration) {
                group.addTask { await run(launch, claims: claims, into: carriers) }
            }
        }
    }

    /// Starts a carrier on a thread of its own at the lowest priority, puts it in its slot, and
    /// runs it until cancelled; one that cannot start is logged, and its slot says so.
    private func run(_ launch: Launch, claims: PersonaClaims, into carriers: ForeignCarriers) async {
        let logger = logger.named(launch.option.replacing("--", with: ""))
        let carrier: any Carrier
        do {
            carrier = try await BlockingPool.runAside { [self] in try launch.start(self, claims, logger) }
        } catch {
            logger.error("\(launch.kind.name) is off: \(error)")
            return carriers.set(launch.kind, .off("it could not start: the log says why"))
        }
        carriers.set(launch.kind, .up(carrier))
        await carrier.run()
    }
}
