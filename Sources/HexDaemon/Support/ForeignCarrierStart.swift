import HexCarrier
import HexNet
import HexTLS
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
    let directory: PeerDirectory
    let downloads: IncomingFiles
    let gate: HandshakeGate
    let trimmer: MemoryTrimmer
    let events: EventLog
    let logger: Logger

    /// How long after hexd serves its own peers the carriers start.
    static let delay: Duration = .milliseconds(300)

    /// The slots as they are before the start: starting when asked for, else off and why.
    static func slots(_ configuration: DaemonConfiguration) -> ForeignCarriers {
        let legacy = "a daemon playing a legacy peer speaks only the original app's protocol"
        return ForeignCarriers(
            localSend: configuration.wire.legacy
                ? .off(legacy) : configuration.localSend.enabled ? .starting : .off("--localsend off"),
            kdeConnect: configuration.wire.legacy
                ? .off(legacy) : configuration.kdeConnect.enabled ? .starting : .off("--kdeconnect off"),
            quickShare: configuration.wire.legacy
                ? .off(legacy) : configuration.quickShare.enabled ? .starting : .off("--quickshare off"))
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
        let files = configuration.dataDirectory
        await withTaskGroup(of: Void.self) { group in
            if configuration.localSend.enabled {
                let logger = logger.named("localsend")
                group.addTask {
                    await run("LocalSend", logger: logger, slot: carriers.setLocalSend) { [self] in
                        try LocalSendCarrier.start(
                            configuration.localSend, discovery: configuration.discovery, visibility: discovery,
                            intake: intake, directory: directory, downloads: downloads,
                            dataDirectory: .init(
                                key: files.localSendKeyPath, certificate: files.localSendCertificatePath),
                            name: name, claims: claims, gate: gate, trimmer: trimmer, events: events, logger: logger)
                    }
                }
            }
            if configuration.kdeConnect.enabled {
                let logger = logger.named("kdeconnect")
                group.addTask {
                    await run("KDE Connect", logger: logger, slot: carriers.setKDEConnect) { [self] in
                        try KDEConnectCarrier.start(
                            configuration.kdeConnect, discovery: configuration.discovery, name: name,
                            keyPath: files.kdeConnectKeyPath, certificatePath: files.kdeConnectCertificatePath,
                            claims: claims, gate: gate, trimmer: trimmer, intake: intake, downloads: downloads,
                            visibility: discovery, dnssd: dnssd, logger: logger)
                    }
                }
            }
            if configuration.quickShare.enabled {
                let logger = logger.named("quickshare")
                group.addTask {
                    await run("Quick Share", logger: logger, slot: carriers.setQuickShare) { [self] in
                        try QuickShareCarrier.start(
                            configuration.quickShare, name: name, intake: intake, downloads: downloads, dnssd: dnssd,
                            claims: claims, gate: gate, trimmer: trimmer, events: events, logger: logger)
                    }
                }
            }
        }
    }

    /// Starts a carrier with `start`, on a thread of its own at the lowest priority, puts it in its
    /// slot, and runs it until cancelled; one that cannot start is logged, and its slot says so.
    private func run<Carrier: DaemonService>(
        _ name: String, logger: Logger, slot: @Sendable (ForeignCarriers.Slot<Carrier>) -> Void,
        start: @escaping @Sendable () throws -> Carrier
    ) async {
        let carrier: Carrier
        do {
            carrier = try await BlockingPool.runAside(start)
        } catch {
            logger.error("\(name) is off: \(error)")
            return slot(.off("it could not start: the log says why"))
        }
        slot(.up(carrier))
        await carrier.run()
    }
}
