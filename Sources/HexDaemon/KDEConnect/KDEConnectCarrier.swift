import FoundationEssentials
import Glibc
import HexEngine
import HexKit
import HexNet
import HexTLS

/// hexd as a KDE Connect device (protocol 7 and 8): its identity broadcast where beacons go, a
/// TCP listener in 1716–1764, one TLS link with each device heard or that dials hexd, and the
/// devices linked listed beside hexd's peers. `KDEConnectLinks` decides when to dial and
/// broadcast, `KDEConnectPairing` answers pairing; this actor moves the datagrams and the links.
///
/// For now (issue 38 under way) a pairing request is declined with the reason in the log, and
/// every other packet of a device not paired is answered `pair: false`, as the apps do.
actor KDEConnectCarrier: DaemonService {
    /// A device with a link up.
    struct Device: Sendable {
        let identity: KDEConnectIdentity
        let address: IPAddress
        /// The version spoken: 7 or 8.
        let version: Int
        let certificate: Fingerprint
        let linkedAt: ContinuousClock.Instant
    }

    /// Links served at once, and from one address (a link is one connection, kept open).
    static let connectionsAtOnce = 64
    static let connectionsPerAddress = 4

    private let socket: DatagramSocket
    private let listener: StreamListener
    private let tls: ForeignTLSContext
    /// hexd's identity as it writes it on a link (no TCP port).
    private let own: KDEConnectIdentity
    private let settings: KDEConnectSettings
    private let discovery: DiscoverySettings
    private let gate: HandshakeGate
    private let trimmer: MemoryTrimmer
    /// Told of each device found and lost (`peerFound`, `peerLost`), for `watch` and the page.
    private let events: EventLog
    private let logger: Logger
    private var links: KDEConnectLinks<IPAddress>
    /// The links up, by device ID, each by its number: the newest is the device's. A device that
    /// dials again replaces its link (it closes the old one itself); when the newest ends, the
    /// next newest still open takes over, and the device is gone once none is left.
    private var openLinks: [String: [Int: Device]] = [:]
    /// The pairing of each device with a link up (none is paired yet: dropped with its last link).
    private var pairings: [String: KDEConnectPairing] = [:]
    private var nextLink = 0
    private let connections = ConnectionTable(total: connectionsAtOnce, perAddress: connectionsPerAddress)
    /// Identities read from one address: 10 a second (20 at once), before they are parsed.
    private var datagramBudget = BucketTable<IPAddress>(rate: 10, burst: 20, capacity: 4_096)

    private init(
        socket: DatagramSocket, listener: StreamListener, tls: ForeignTLSContext, own: KDEConnectIdentity,
        settings: KDEConnectSettings, discovery: DiscoverySettings, gate: HandshakeGate, trimmer: MemoryTrimmer,
        events: EventLog, logger: Logger
    ) {
        self.events = events
        self.socket = socket
        self.listener = listener
        self.tls = tls
        self.own = own
        self.settings = settings
        self.discovery = discovery
        self.gate = gate
        self.trimmer = trimmer
        self.logger = logger
        links = KDEConnectLinks(ownDeviceID: own.deviceID)
    }

    /// Loads or makes the persona (its common name a new device ID: 32 hex digits, as the current
    /// apps make), takes the UDP port (shared, as another KDE Connect program on this host may
    /// hold it too) and the first free TCP port from it up to 1764.
    /// - Throws: `TLSError` when the persona cannot be read or made, or names no valid device ID;
    ///   `SocketError` when not even an ephemeral UDP port can be had, `Unavailable` when no TCP
    ///   port can.
    static func start(
        _ settings: KDEConnectSettings, discovery: DiscoverySettings, name: String, keyPath: String,
        certificatePath: String, gate: HandshakeGate, trimmer: MemoryTrimmer, events: EventLog, logger: Logger
    ) throws -> KDEConnectCarrier {
        let newID = String(UUID().uuidString.filter { $0 != "-" }).lowercased()
        let (persona, created) = try PersonaIdentity.loadOrCreate(
            keyPath: keyPath, certificatePath: certificatePath, kind: .p256, commonName: newID,
            organization: "KDE", organizationalUnit: "KDE Connect", label: "KDE Connect")
        guard let deviceID = persona.commonName, KDEConnectIdentity.isValidDeviceID(deviceID) else {
            throw TLSError("read the KDE Connect identity", reason: "\(certificatePath) names no KDE Connect device ID")
        }
        if created { logger.info("made a KDE Connect identity: device ID \(deviceID)") }
        let socket: DatagramSocket
        do {
            socket = try DatagramSocket(port: settings.port)
        } catch {
            socket = try DatagramSocket(port: 0)
            logger.warning(
                "UDP \(settings.port) is taken without sharing (\(error)): hexd hears no KDE Connect identity")
        }
        let first = Int(settings.port)
        let last = max(first, Int(KDEConnectIdentity.tcpPorts.upperBound))
        var listener: StreamListener?
        for port in first...last {
            if let taken = try? StreamListener.tcp(port: UInt16(port)) {
                listener = taken
                break
            }
        }
        guard let listener else {
            throw Unavailable(description: "cannot listen on any TCP port from \(first) to \(last): all are taken")
        }
        if listener.port != settings.port {
            logger.warning(
                "TCP \(settings.port) is taken (kdeconnectd on this host?): hexd's links are on \(listener.port)")
        }
        let own = KDEConnectIdentity(
            deviceID: deviceID, name: name, deviceType: .desktop,
            protocolVersion: KDEConnectIdentity.protocolVersions.upperBound,
            incomingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"],
            outgoingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"])
        return KDEConnectCarrier(
            socket: socket, listener: listener, tls: try ForeignTLSContext(persona: persona), own: own,
            settings: settings, discovery: discovery, gate: gate, trimmer: trimmer, events: events,
            logger: logger)
    }

    /// The devices with a link up (as their newest link describes them), the latest linked first.
    var linkedDevices: [Device] {
        openLinks.values.compactMap { $0.max { $0.key < $1.key }?.value }.sorted { $0.linkedAt > $1.linkedAt }
    }

    /// Asks the LAN who is there now (`hexctl peers --refresh`).
    func refresh() {
        perform(links.refresh(at: .now))
    }

    nonisolated func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.hear() }
            group.addTask { await self.serve() }
        }
    }

    // MARK: Broadcasts

    /// Receives identities until cancelled, acting on the links' deadlines between them.
    private func hear() async {
        perform(links.started(at: .now))
        while !Task.isCancelled {
            do {
                let longest = KDEConnectPacket.maximumIdentitySize + 1
                if let datagram = try await socket.receive(maximumLength: longest, before: links.deadline) {
                    take(datagram)
                }
                if let deadline = links.deadline, deadline <= .now { perform(links.tick(at: .now)) }
            } catch is CancellationError {
                return
            } catch {
                logger.limited("kdeconnect receive", .warning, "KDE Connect broadcasts: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One identity: at most 10 a second from an address are read.
    private func take(_ datagram: DatagramSocket.Datagram) {
        guard datagramBudget.take(datagram.sender, at: .now), !datagram.truncated else { return }
        let identity: KDEConnectIdentity
        do {
            identity = try KDEConnectIdentity(
                try KDEConnectPacket.decode(datagram.bytes, maximumSize: KDEConnectPacket.maximumIdentitySize),
                broadcast: true)
        } catch {
            logger.limited("kdeconnect datagram", .debug, "a KDE Connect datagram from \(datagram.sender): \(error)")
            return
        }
        perform(links.heard(identity, from: datagram.sender, at: .now))
    }

    private func perform(_ actions: [KDEConnectLinks<IPAddress>.Action]) {
        for action in actions {
            switch action {
            case .broadcast: broadcast()
            case .dial(let identity, let address):
                Task { await self.dial(identity, at: address) }
            }
        }
    }

    /// hexd's identity, with its TCP port, to the broadcast address of every interface beacons go
    /// out on.
    private func broadcast() {
        var identity = own
        identity.tcpPort = listener.port
        let bytes = identity.encoded(id: Self.milliseconds())
        for destination in discovery.announcingBroadcasts(of: NetworkInterfaces.addresses()) {
            do {
                try socket.send(bytes, to: .v4(destination), port: settings.port)
            } catch {
                logger.limited("kdeconnect send", .warning, "KDE Connect identity to \(destination): \(error)")
            }
        }
    }

    // MARK: Links

    /// Dials a device heard, and keeps the link if its handshake proves the device.
    private nonisolated func dial(_ identity: KDEConnectIdentity, at address: IPAddress) async {
        do {
            guard let port = identity.tcpPort else { throw KDEConnectHandshake.Failure.identity("no TCP port") }
            let socket = try await StreamConnector.tcp(to: Endpoint(address, port: port), timeout: .seconds(5))
            try? socket.keepAlive(idle: 10, interval: 5, probes: 3)
            let link = try await KDEConnectHandshake.dial(
                socket, own: own, heard: identity, tls: tls, now: Self.milliseconds())
            guard link.identity.deviceID == identity.deviceID else {
                socket.shutdown()
                throw KDEConnectHandshake.Failure.mismatch("another device answered at \(address)")
            }
            await keep(link, from: address)
            socket.shutdown()
        } catch {
            await dialFailed(identity.deviceID)
            logger.limited(
                "kdeconnect dial", .info,
                "cannot link with KDE Connect device \(identity.name) at \(address): \(error)")
        }
    }

    /// A dial ended without a link: the next one waiting may start.
    private func dialFailed(_ deviceID: String) {
        links.dialFailed(deviceID, at: .now)
        perform(links.tick(at: .now))
    }

    /// Accepts links until cancelled: each connection within the tables' bounds and the
    /// handshake gate's budget.
    private nonisolated func serve() async {
        await acceptConnections(on: listener, logger: logger) { socket in
            guard let address = socket.remoteAddress, self.gate.admit(socket, on: "KDE Connect") != nil else {
                socket.shutdown()
                return
            }
            await self.accepted(socket, from: address)
        }
    }

    private nonisolated func accepted(_ socket: Socket, from address: IPAddress) async {
        guard connections.admit(socket, from: address.description) != .refused else {
            socket.shutdown()
            return
        }
        try? socket.keepAlive(idle: 10, interval: 5, probes: 3)
        do {
            let link = try await KDEConnectHandshake.accept(socket, own: own, tls: tls, now: Self.milliseconds())
            // Proved, the link leaves the table of connections in their handshake (which closes the
            // stalest for a newcomer): links are bounded by `KDEConnectLinks`, and one is never
            // closed under its device (22.12 then loses it).
            connections.remove(socket)
            await keep(link, from: address)
        } catch {
            connections.remove(socket)
            logger.limited("kdeconnect accept", .info, "closed a KDE Connect connection from \(address): \(error)")
        }
        socket.shutdown()
        trimmer.burstFreed()
    }

    /// A link whose handshake proved its device: listed (in place of the device's older link,
    /// which the device closes itself), then read until it ends.
    private nonisolated func keep(_ link: KDEConnectHandshake.Link, from address: IPAddress) async {
        let device = Device(
            identity: link.identity, address: address, version: link.version, certificate: link.certificate,
            linkedAt: .now)
        guard let number = await linkUp(device) else {
            logger.limited("kdeconnect cap", .info, "closed a link with \(link.identity.name): too many unpaired links")
            return
        }
        await read(link)
        await linkEnded(device.identity, number: number)
    }

    /// Lists a device whose link is up; nil when the link is not taken: past the cap of unpaired
    /// links, or claiming a device whose link up showed another certificate (anyone can put any
    /// device ID in a certificate of their own).
    private func linkUp(_ device: Device) async -> Int? {
        let id = device.identity.deviceID
        let open = openLinks[id] ?? [:]
        if let current = open.max(by: { $0.key < $1.key })?.value, current.certificate != device.certificate {
            // Ends a dial of hexd's own that reached it, as a failure: the device stays dialable.
            links.dialFailed(id, at: .now)
            logger.limited(
                "kdeconnect impostor", .warning,
                "refused a link from \(device.address) claiming KDE Connect device \(device.identity.name): its "
                    + "certificate is not the one of that device's link up")
            return nil
        }
        let taken = links.linkUp(id, paired: pairings[id]?.isPaired ?? false, at: .now)
        // A dial may have ended: the next one waiting may start.
        perform(links.tick(at: .now))
        guard taken else { return nil }
        nextLink += 1
        openLinks[id, default: [:]][nextLink] = device
        pairings[id, default: KDEConnectPairing(paired: false, version: device.version)].version = device.version
        if open.isEmpty {
            logger.info(
                "KDE Connect device \(device.identity.name) (\(device.identity.deviceType.rawValue)) at "
                    + "\(device.address), protocol \(device.version)")
            await events.publish(
                .peerFound, peerUUID: PeerKind.kdeConnectPrefix + id, peer: device.identity.name,
                versionID: "KDE Connect \(device.version)")
        }
        return nextLink
    }

    /// A link ended: its device is gone once no link of it is left.
    private func linkEnded(_ identity: KDEConnectIdentity, number: Int) async {
        let id = identity.deviceID
        openLinks[id]?[number] = nil
        guard openLinks[id]?.isEmpty ?? false else { return }
        openLinks[id] = nil
        links.linkDown(id)
        if pairings[id]?.isPaired == false { pairings[id] = nil }
        logger.info("KDE Connect device \(identity.name) is gone")
        await events.publish(.peerLost, peerUUID: PeerKind.kdeConnectPrefix + id, peer: identity.name)
    }

    static let pace = LinePace(idle: .seconds(7 * 86_400), grace: .seconds(10), minimumBytesPerSecond: 64 * 1_024)

    /// Reads the link's packets until it ends, answering pairing.
    private nonisolated func read(_ link: KDEConnectHandshake.Link) async {
        while !Task.isCancelled {
            // Idle for long (a device that vanished is seen by TCP keepalive), but a line begun must
            // keep coming.
            guard case .line(let line)? = try? await link.lines.readLine(pace: Self.pace) else { return }
            guard let packet = try? KDEConnectPacket.decode(line) else {
                logger.limited("kdeconnect packet", .info, "an unreadable packet from \(link.identity.name)")
                continue
            }
            for reply in await answer(packet, from: link.identity) {
                let bytes = reply.encoded(id: Self.milliseconds()).dropLast()
                guard (try? await link.lines.writeLine(bytes, timeout: .seconds(10))) != nil else { return }
            }
        }
    }

    /// What hexd answers a packet with: pairing, for now declined.
    private func answer(_ packet: KDEConnectPacket, from identity: KDEConnectIdentity) -> [KDEConnectPair] {
        let id = identity.deviceID
        // A packet comes on a link, whose device has its pairing (dropped with its last link).
        guard var pairing = pairings[id] else { return [] }
        defer { pairings[id] = pairing }
        var actions: [KDEConnectPairing.Action]
        if let pair = KDEConnectPair(packet) {
            actions = pairing.received(pair, at: .now, wallClock: Self.seconds())
            if actions.contains(where: { if case .askPerson = $0 { true } else { false } }) {
                logger.limited(
                    "kdeconnect pairing", .info,
                    "declined a pairing request from KDE Connect device \(identity.name): hexd does not pair with "
                        + "KDE Connect devices yet")
                actions += (try? pairing.decline(at: .now)) ?? []
            }
        } else {
            actions = pairing.otherPacket(at: .now).actions
        }
        return actions.compactMap { if case .send(let pair) = $0 { pair } else { nil } }
    }

    /// Why the carrier cannot start.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: Clocks

    private nonisolated static func milliseconds() -> Int64 {
        Int64(exactly: (Date().timeIntervalSince1970 * 1_000).rounded(.down)) ?? 0
    }

    private nonisolated static func seconds() -> Int64 {
        Int64(exactly: Date().timeIntervalSince1970.rounded(.down)) ?? 0
    }
}
