import CLinux
import Dispatch
import Glibc
import HexCarrier
import HexCommandLine
import HexDBus
import HexKit
import HexNet
import HexStore
import HexTLS

/// The running daemon: the store, discovery, the envelope server and the control socket.
public enum Daemon {
    /// Starts every service and runs until SIGTERM or SIGINT; then says `bye`, removes the control
    /// socket and returns.
    /// - Throws: `DaemonError` or a socket, store or data directory error when it cannot start.
    public static func run(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        // Everything hexd creates (database, journal, lock, socket) is its user's alone.
        umask(0o077)
        // Large line buffers go back to the system when freed, so memory follows the budgets.
        hexd_return_large_allocations()
        // Raised first, so that everything opened below is counted against the limit in force.
        let descriptors = DescriptorLimit.raise()
        guard descriptors >= DescriptorLimit.minimum else {
            throw DaemonError.cannotStart(
                "the descriptor limit is \(descriptors): hexd needs at least \(DescriptorLimit.minimum) "
                    + "(raise it with ulimit -n, or LimitNOFILE= in a systemd unit)")
        }
        ForeignCarrierStart.registerIDForms()
        let dataDirectory = configuration.dataDirectory
        for tightened in try dataDirectory.create(personas: ForeignCarrierStart.personas) {
            logger.warning("made private: \(tightened)")
        }
        let lock = try DataDirectoryLock(dataDirectory)
        let controlPath = dataDirectory.socketPath

        let tls = try deviceTLS(configuration, logger: logger)
        let service = try HexService(
            dataDirectory: dataDirectory, name: configuration.name,
            deviceID: tls?.identity.deviceID, versionID: configuration.wire.appVersion,
            accepting: configuration.accept, settings: configuration.store,
            logger: logger.named("store"))
        if let replaced = service.replacedUUID {
            logger.warning(
                "this device's peer UUID is now \(service.identity.uuid), the ID its key derives; "
                    + "it was \(replaced). "
                    + "Peers that pinned its key move their pins to the new ID at the next TLS contact")
        }
        let envelopeListener = try StreamListener.tcp(port: configuration.tcpPort)
        let datagrams = try DatagramSocket(port: configuration.discovery.port)
        var envelopeListeners = [envelopeListener]
        var datagrams6: DatagramSocket?
        if NetworkInterfaces.isIPv6TurnedOff {
            logger.info(
                "IPv6 is turned off on this host (net.ipv6.conf.all.disable_ipv6): discovery and envelopes "
                    + "go over IPv4 only")
        } else {
            var failures: [String] = []
            do {
                envelopeListeners.append(try StreamListener.tcp(address: .anyV6, port: envelopeListener.port))
            } catch {
                failures.append("envelopes go over IPv4 only (\(error))")
            }
            do {
                datagrams6 = try DatagramSocket(address: .anyV6, port: datagrams.port)
            } catch {
                failures.append("discovery goes over IPv4 only (\(error))")
            }
            if !failures.isEmpty { logger.info("no IPv6 here: " + failures.joined(separator: "; ")) }
        }
        let controlListener = try StreamListener.unix(path: controlPath)
        let events = EventLog()
        let arrivals = ArrivalFeed()
        let boot = try await service.nextBootNumber()
        if !boot.stored { logger.warning("cannot store this start's number (\(boot.number)): is the disk full?") }
        let directory = PeerDirectory(
            ownUUID: service.identity.uuid, capacity: configuration.discovery.maximumPeers,
            service: service, events: events, logger: logger.named("peers"))
        let discovery = Discovery(
            socket: datagrams, socket6: datagrams6, settings: configuration.discovery,
            versionID: configuration.wire.appVersion,
            identity: service.identity, signer: tls?.identity, boot: boot.number,
            tcpPort: envelopeListener.port, directory: directory, events: events,
            service: service, logger: logger.named("discovery"),
            visibility: try await service.visibility())
        let dnssd = await dnsSD(
            configuration, tls: tls, identity: service.identity, start: discovery.instance,
            tcpPort: envelopeListener.port, withIPv6: datagrams6 != nil, discovery: discovery,
            directory: directory, events: events, logger: logger.named("mdns"))
        let maximumConnections = min(configuration.inbound.maximumConnections, DescriptorLimit.connections(descriptors))
        if maximumConnections < configuration.inbound.maximumConnections {
            logger.warning(
                "the descriptor limit is \(descriptors): serving at most \(maximumConnections) peer connections "
                    + "at once, not \(configuration.inbound.maximumConnections)"
            )
        }
        let trimmer = MemoryTrimmer()
        let gate = HandshakeGate(budgets: configuration.inbound.handshakeBudgets, logger: logger.named("admission"))
        let pool = ConnectionPool()
        let downloads =
            configuration.files.downloads
            ?? DownloadsFolder.defaultPath(
                environment: ProcessInfo.processInfo.environment, dataDirectory: dataDirectory)
        let intake = Intake(
            service: service, directory: directory, events: events, arrivals: arrivals, logger: logger.named("inbox"))
        let incoming = IncomingFiles(folder: DownloadsFolder(path: downloads), floor: configuration.store.freeFloor)
        let carriers = ForeignCarrierStart.slots(configuration)
        let envelopeCarrier = EnvelopeCarrier(
            wire: configuration.wire, tls: tls, directory: directory, service: service, logger: logger.named("send"),
            pool: pool, gate: gate)
        let sender = SendService(envelopes: envelopeCarrier, carriers: carriers, service: service)
        let pairing = tls.map {
            PairingService(
                tls: $0, wire: configuration.wire, directory: directory, service: service,
                envelopes: envelopeCarrier, events: events, arrivals: arrivals, logger: logger.named("pair"))
        }
        // Files are shared and fetched over TLS only: a daemon playing a legacy peer has neither.
        let grants = tls.map { _ in FileGrants(store: service, settings: configuration.files) }
        let fileServer = grants.map {
            FileServer(grants: $0, versionID: configuration.wire.appVersion, logger: logger.named("files"))
        }
        let fetcher = tls.map { _ in
            FileFetcher(
                sender: sender, wire: configuration.wire, store: configuration.store,
                defaultFolder: DownloadsFolder(path: downloads),
                events: events, logger: logger.named("fetch"))
        }
        let envelopes = EnvelopeServer(
            listeners: envelopeListeners, service: service, intake: intake,
            pairing: pairing, files: fileServer,
            wire: configuration.wire, settings: configuration.inbound, tls: tls, maximumConnections: maximumConnections,
            trimmer: trimmer, gate: gate,
            logger: logger.named("tcp"))
        let outbox = Outbox(
            store: service, sender: sender, events: events, wire: configuration.wire,
            lifetime: configuration.outboxLifetime, logger: logger.named("outbox"))
        let control = ControlServer(
            listener: controlListener,
            handler: ControlHandler(
                wire: configuration.wire, accept: configuration.accept, dataDirectory: dataDirectory.path,
                service: service, sender: sender, outbox: outbox,
                share: ShareService(
                    links: configuration.links, grants: grants,
                    ownerID: service.identity.uuid, events: events),
                discovery: discovery, directory: directory, dnssd: dnssd, inbound: envelopes,
                pairing: pairing, fetcher: fetcher, carriers: carriers,
                tcpPort: envelopeListener.port,
                discoveryPort: datagrams.port, logger: logger.named("control")),
            events: events, logger: logger.named("control"))

        var hook: ReceiveHook?
        if let words = configuration.receiveHook.command {
            // Watched now, before any envelope is taken: the first hex stored is not missed.
            hook = ReceiveHook(
                words: words, settings: configuration.receiveHook,
                arrivals: arrivals.subscribe(), spool: try dataDirectory.makeSpool(),
                logger: logger.named("on-receive"))
        }

        var autoFetch: AutoFetch?
        if let fetcher, configuration.files.autoFetchPaired {
            autoFetch = AutoFetch(arrivals: arrivals.subscribe(), fetcher: fetcher, logger: logger.named("fetch"))
        }

        let web = try WebServer.start(
            configuration.web, dataDirectory: dataDirectory, handler: control.handler,
            events: events, boot: boot.number, logger: logger.named("web"))
        let notifier = desktopNotifier(
            configuration, arrivals: arrivals,
            page: web.map { _ in dataDirectory.webOpenURL }, logger: logger)

        // SIGPIPE harms nothing: a peer vanishing mid-write is an EPIPE error, not the daemon's death.
        Glibc.signal(SIGPIPE, SIG_IGN)
        let signals = try TerminationSignals()
        let identity = service.identity
        logger.info(
            "hexd \(configuration.wire.appVersion)"
                + "\(configuration.wire.legacy ? " (playing a legacy peer)" : "") ready: "
                + "\(identity.name) (\(identity.uuid)), "
                + "envelopes on TCP \(envelopeListener.port), discovery on UDP \(datagrams.port), "
                + "control at \(controlPath)"
        )
        let serviceManager = ServiceNotifier(environment: ProcessInfo.processInfo.environment)
        serviceManager.notify("READY=1\nSTATUS=serving as \(identity.name)")

        let optional: [(any DaemonService)?] = [hook, web, notifier, autoFetch, dnssd.service]
        let services: [any DaemonService] =
            [envelopes, discovery, control, trimmer, pool, outbox]
            + optional.compactMap { $0 }
        let foreign = ForeignCarrierStart(
            configuration: configuration, tls: tls, name: identity.name, discovery: discovery, dnssd: dnssd,
            intake: intake, downloads: incoming, gate: gate, trimmer: trimmer, events: events, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            for service in services { group.addTask { await service.run() } }
            // Once hexd serves its own peers: their personas may have to be made first.
            group.addTask { await foreign.run(into: carriers) }
            let received: Int32
            do {
                received = try await signals.next()
            } catch {
                // Safer stopped than unstoppable: a signal pipe that fails would hold every signal.
                logger.error("cannot read SIGTERM or SIGINT (\(error)): stopping")
                received = SIGTERM
            }
            logger.info("\(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping")
            serviceManager.notify("STOPPING=1")
            group.cancelAll()
        }
        await discovery.sayGoodbye()
        await dnssd.sayGoodbye()
        await directory.carrySightingsOver()
        do {
            try await service.writeSightings()
        } catch {
            logger.warning("cannot remember the peers seen last: \(error)")
        }
        withExtendedLifetime((lock, signals)) {}
        logger.info("stopped")
    }

    /// The notifier `--notify` asks for (by default, when the environment names a session bus),
    /// watching from now so that the first hex is not missed; nil for none.
    private static func desktopNotifier(
        _ configuration: DaemonConfiguration, arrivals: ArrivalFeed, page: String?, logger: Logger
    ) -> DesktopNotifier? {
        let environment = ProcessInfo.processInfo.environment
        let busText = environment["DBUS_SESSION_BUS_ADDRESS"]
        guard configuration.notify.enabled ?? (busText != nil) else { return nil }
        let address: DBusAddress
        do {
            address = try DBusAddress(parsing: busText ?? "")
        } catch {
            logger.warning(
                "--notify on, but no session bus to notify on: DBUS_SESSION_BUS_ADDRESS is "
                    + (busText.map { "'\($0.prefix(200))' (\(error))" } ?? "not set"))
            return nil
        }
        return DesktopNotifier(
            address: address,
            arrivals: arrivals.subscribe(), settings: configuration.notify, page: page,
            browser: Browser.command(environment), logger: logger.named("notify"))
    }

    /// DNS-SD as `--mdns` asks (`auto`: unless `--broadcast` names where beacons go, which keeps a
    /// daemon off every other network): through Avahi when it is on the system bus, else with
    /// hexd's own responder, unless Avahi runs where the bus cannot reach it (`auto` then leaves
    /// port 5353 to it). Or why not: off as asked, when port 5353 cannot be had (said once), or
    /// for a daemon playing a legacy peer, which has no key-derived ID to publish.
    private static func dnsSD(
        _ configuration: DaemonConfiguration, tls: TLSContext?, identity: LocalIdentity, start: String,
        tcpPort: UInt16, withIPv6: Bool, discovery: Discovery, directory: PeerDirectory, events: EventLog,
        logger: Logger
    ) async -> DNSSDState {
        guard let tls else { return .off("a legacy peer publishes nothing") }
        switch configuration.dnssd.mode {
        case .off:
            return .off("--mdns off")
        case .auto where !configuration.discovery.broadcastAddresses.isEmpty:
            return .off("--broadcast names where beacons go (--mdns on publishes anyway)")
        case .auto, .on:
            break
        }
        let fingerprint = tls.identity.fingerprint.description
        do {
            if let bus = try? DBusAddress.system(environment: ProcessInfo.processInfo.environment),
                await AvahiService.runs(on: bus)
            {
                return .avahi(
                    try AvahiService(
                        bus: bus, identity: identity, versionID: configuration.wire.appVersion,
                        start: start, fingerprint: fingerprint, tcpPort: tcpPort,
                        discovery: discovery, directory: directory, events: events,
                        logger: logger))
            }
            if configuration.dnssd.mode == .auto && DNSSDService.otherResponderRuns {
                let why =
                    "Avahi runs on this host but is not on the system bus (--mdns on runs hexd's own "
                    + "responder beside it)"
                logger.info("DNS-SD is off: \(why); hexd is found by its beacons")
                return .off(why)
            }
            return .own(
                try DNSSDService(
                    identity: identity, versionID: configuration.wire.appVersion, start: start,
                    fingerprint: fingerprint, tcpPort: tcpPort,
                    selection: configuration.discovery.interfaces, withIPv6: withIPv6, discovery: discovery,
                    directory: directory, events: events, logger: logger))
        } catch {
            logger.warning("DNS-SD is off: \(error)")
            return .off("\(error)")
        }
    }

    /// The TLS context of this device, its identity read from the data directory or made there on
    /// first start; nil when playing a legacy peer, which speaks no TLS.
    private static func deviceTLS(_ configuration: DaemonConfiguration, logger: Logger) throws -> TLSContext? {
        guard !configuration.wire.legacy else { return nil }
        let directory = configuration.dataDirectory
        let (device, created) = try TLSIdentity.loadOrCreate(
            keyPath: directory.keyPath, certificatePath: directory.certificatePath,
            commonName: "hexd device")
        if created {
            logger.info(
                "made this device's key and certificate: device ID \(device.deviceID.uppercaseText), "
                    + "fingerprint \(device.fingerprint)")
        }
        return try TLSContext(identity: device)
    }
}
