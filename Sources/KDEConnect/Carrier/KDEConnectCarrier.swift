import FoundationEssentials
import Glibc
import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import KDEConnectCore

/// hexd as a KDE Connect device (protocol 7 and 8): its identity broadcast where beacons go and
/// sent to each device DNS-SD finds, `_kdeconnect._udp` published as the apps publish it, a
/// TCP listener in 1716–1764, one TLS link with each device heard or that dials hexd, and the
/// devices linked listed beside hexd's peers. `KDEConnectLinks` decides when to dial and
/// broadcast, `KDEConnectDevices` which links are taken and when a device is gone,
/// `KDEConnectPairing` when pairing moves; this actor moves the datagrams, the links and the
/// packets, and acts on the machines' deadlines in one loop (`keepTime`). Pairing is the
/// person's (`+Pairing`); a paired device's shares become hexes (`+Receiving`), and hexes go to
/// it as shares (`+Sending`). A device not paired that sends
/// anything else than pairing is answered `pair: false`, as the apps do. It follows the daemon's
/// visibility: hidden, it broadcasts nothing and links with paired devices alone (dialing those it
/// hears, taking their links).
package actor KDEConnectCarrier {
    /// A device with a link up.
    struct Device: Sendable {
        let identity: KDEConnectIdentity
        let address: IPAddress
        /// The version spoken: 7 or 8.
        let version: Int
        let certificate: Fingerprint
        /// Its public key (SubjectPublicKeyInfo), for the verification code.
        let publicKey: [UInt8]
        let linkedAt: ContinuousClock.Instant
        /// The packets others queue for the device on this link.
        let outgoing: KDEConnectOutgoing
        /// The link's connection, for closing it.
        let socket: Socket

        /// What hexd's tables know the device by: its device ID in lower case (one in another case
        /// is the same device, and must prove the same certificate).
        var key: String { identity.deviceID.lowercased() }

        /// The ID the device goes by in hexd (`kdeconnect:` and its device ID).
        var peerID: String { KDEConnectID.form.prefix + key }

        /// What its TLS handshake proved: its certificate, which speaks for `peerID`.
        var proof: SenderProof { .key(fingerprint: certificate.description, deviceID: peerID) }

        /// The device as the log and the person read it: its name, and where it is.
        var label: String { "\(identity.name) (\(address))" }
    }

    /// Links served at once, and from one address (a link is one connection, kept open).
    static let connectionsAtOnce = 64
    static let connectionsPerAddress = 4
    /// How long a packet of hexd's own (pairing, a file's offer) may wait for its link's reader.
    static let queueWait: Duration = .seconds(10)
    /// Identity datagrams read from one address, a second (Protocol.md 17).
    static let identitiesPerSecond = 10

    /// The budget identity datagrams are read within, before they are parsed.
    static func identityBudget() -> DatagramBudget<IPAddress> {
        DatagramBudget(rate: identitiesPerSecond)
    }

    private let socket: DatagramSocket
    private let listener: StreamListener
    let tls: ForeignTLSContext
    /// Where shared files land.
    let downloads: IncomingFiles
    /// hexd's identity as it writes it on a link (no TCP port), with its claim on it.
    let own: KDEConnectIdentity
    /// Tells another hexd's persona, which is left to hexd's own protocol.
    private let claims: PersonaClaims
    /// hexd's public key (SubjectPublicKeyInfo), for the verification code.
    let ownKey: [UInt8]
    /// Why hexd does not hold KDE Connect's ports; nil when it does.
    let portNote: String?
    private let settings: KDEConnectSettings
    /// Whether a hex goes as one `url` share per link (`--kdeconnect-each-link`).
    nonisolated var sendsEachLink: Bool { settings.eachLink }
    private let discovery: DiscoverySettings
    private let gate: HandshakeGate
    private let trimmer: MemoryTrimmer
    /// hexd's discovery, whose visibility the carrier follows.
    private let visibility: any CarrierVisibility
    /// DNS-SD, through which hexd publishes `_kdeconnect._udp` and finds the devices that do
    /// (neither when hexd runs none: `--mdns off`).
    private let dnssd: any CarrierDNSSD
    private var isVisible = true
    /// Where shares become hexes (under the rules every peer's are kept by), pairings are kept,
    /// and devices are told of (`peerFound`, `peerLost`, `pairRequested`, `paired`).
    let intake: any CarrierIntake
    let logger: Logger
    /// When to dial and broadcast. Any change may bring its deadline forward: `keepTime` starts
    /// its wait over.
    var links: KDEConnectLinks<IPAddress> { didSet { clock.ring() } }
    /// The devices with a link up and their pairings (a paired one's read again from the store when
    /// it is back), and when a device that left is gone or a request ends.
    var devices = KDEConnectDevices<Device>() { didSet { clock.ring() } }
    /// Rung whenever a machine changes, for `keepTime` to wait for the new deadline.
    private let clock = Doorbell()
    /// The files each paired device shared that wait for their fetch, by device key: fetched one
    /// at a time, apart from the link's reader; a key is here while its device's fetcher runs.
    var fileQueues: [String: [KDEConnectSharedFile]] = [:]
    private let connections = ConnectionTable(total: connectionsAtOnce, perAddress: connectionsPerAddress)
    /// Identities read from one address a second (twice as many at once), before they are parsed.
    private var datagramBudget = KDEConnectCarrier.identityBudget()

    private init(
        socket: DatagramSocket, listener: StreamListener, tls: ForeignTLSContext, own: KDEConnectIdentity,
        ownKey: [UInt8], portNote: String?, settings: KDEConnectSettings, discovery: DiscoverySettings,
        claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer, intake: any CarrierIntake,
        downloads: IncomingFiles, visibility: any CarrierVisibility, dnssd: any CarrierDNSSD, logger: Logger
    ) {
        self.visibility = visibility
        self.dnssd = dnssd
        self.portNote = portNote
        self.downloads = downloads
        self.intake = intake
        self.socket = socket
        self.listener = listener
        self.tls = tls
        self.own = own
        self.ownKey = ownKey
        self.settings = settings
        self.discovery = discovery
        self.claims = claims
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
    package static func start(
        _ settings: KDEConnectSettings, discovery: DiscoverySettings, name: String, keyPath: String,
        certificatePath: String, claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer,
        intake: any CarrierIntake, downloads: IncomingFiles, visibility: any CarrierVisibility, dnssd: any CarrierDNSSD,
        logger: Logger
    ) throws -> KDEConnectCarrier {
        let newID = String(UUID().uuidString.filter { $0 != "-" }).lowercased()
        let (persona, created) = try PersonaIdentity.loadOrCreate(
            keyPath: keyPath, certificatePath: certificatePath, kind: .p256, commonName: newID,
            organization: "KDE", organizationalUnit: "KDE Connect", label: "KDE Connect")
        guard let deviceID = persona.commonName, KDEConnectIdentity.isValidDeviceID(deviceID),
            let ownKey = persona.publicKeyDER
        else {
            throw TLSError("read the KDE Connect identity", reason: "\(certificatePath) names no KDE Connect device ID")
        }
        if created { logger.info("made a KDE Connect identity: device ID \(deviceID)") }
        var notes: [String] = []
        let (socket, refusal) = try DatagramSocket.sharing(port: settings.port)
        if let refusal {
            notes.append(
                "UDP \(settings.port) is taken without sharing (\(refusal)): hexd hears no KDE Connect identity")
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
            notes.append(
                "TCP \(settings.port) is taken (kdeconnectd on this host?): hexd's links are on \(listener.port)")
        }
        for note in notes { logger.warning(note) }
        let own = KDEConnectIdentity(
            deviceID: deviceID, name: name, deviceType: .desktop,
            protocolVersion: KDEConnectIdentity.protocolVersions.upperBound,
            incomingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"],
            outgoingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"],
            hexdClaim: KDEConnectID.of(deviceID: deviceID).flatMap { claims.claim(persona: $0) })
        return KDEConnectCarrier(
            socket: socket, listener: listener, tls: try ForeignTLSContext(persona: persona), own: own, ownKey: ownKey,
            portNote: notes.isEmpty ? nil : notes.joined(separator: "; "),
            settings: settings, discovery: discovery, claims: claims, gate: gate, trimmer: trimmer, intake: intake,
            downloads: downloads, visibility: visibility, dnssd: dnssd, logger: logger)
    }

    /// The devices with a link up (as their newest link describes them), the latest linked first.
    var linkedDevices: [Device] { devices.newestLinks.map(\.link) }

    /// The TCP port of its links.
    nonisolated var port: UInt16 { listener.port }

    /// The devices with a link up, and how many of them are paired (`hexctl status`).
    var linkedCounts: (devices: Int, paired: Int) {
        let devices = linkedDevices
        return (devices.count, devices.filter { self.devices.isPaired($0.key) }.count)
    }

    /// Asks the LAN who is there now (`hexctl peers --refresh`).
    package func refresh() {
        act(on: links.refresh(at: .now))
    }

    package nonisolated func run() async {
        let changes = await intake.events.watch(since: .max, kinds: [.visibilityChanged])
        await followVisibility()
        await withTaskGroup(of: Void.self) { group in
            // Beside the rest: through Avahi, publishing takes a few calls on the system bus.
            group.addTask {
                await self.dnssd.publish(await self.advert)
                await self.dnssd.browse(Self.serviceType) { instance in await self.found(instance) }
            }
            group.addTask {
                for await _ in changes { await self.followVisibility() }
            }
            group.addTask { await self.hear() }
            group.addTask { await self.serve() }
            group.addTask { await self.keepTime() }
        }
    }

    /// Takes the daemon's visibility: shown again, hexd broadcasts at once; hidden, it closes the
    /// links of devices not paired.
    private func followVisibility() async {
        let wasVisible = isVisible
        isVisible = await visibility.isVisible
        if isVisible && !wasVisible { act(on: links.refresh(at: .now)) }
        if !isVisible && wasVisible {
            for (key, device) in devices.allLinks where !devices.isPaired(key) { device.socket.shutdown() }
        }
    }

    // MARK: Broadcasts

    /// Receives identities until cancelled.
    private func hear() async {
        act(on: links.started(at: .now))
        while !Task.isCancelled {
            do {
                let longest = KDEConnectPacket.maximumIdentitySize + 1
                if let datagram = try await socket.receive(maximumLength: longest, before: nil) { take(datagram) }
            } catch is CancellationError {
                return
            } catch {
                logger.limited("kdeconnect receive", .warning, "KDE Connect broadcasts: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One identity: at most 10 a second from an address are read. One from this host's loopback
    /// is dropped, as the apps drop it: it is hexd's own, or another program's here (a kdeconnectd
    /// this hexd leaves working; two daemons on one host would otherwise link on loopback). Another
    /// hexd's persona is dropped too: that daemon is met as a hexd peer, and never linked.
    private func take(_ datagram: DatagramSocket.Datagram) {
        guard !datagram.sender.isLoopback, datagramBudget.admit(datagram.sender, at: .now), !datagram.truncated else {
            return
        }
        let identity: KDEConnectIdentity
        do {
            identity = try KDEConnectIdentity(
                try KDEConnectPacket.decode(datagram.bytes, maximumSize: KDEConnectPacket.maximumIdentitySize),
                broadcast: true)
        } catch {
            logger.limited("kdeconnect datagram", .debug, "a KDE Connect datagram from \(datagram.sender): \(error)")
            return
        }
        guard !isHexd(identity) else { return }
        act(on: links.heard(identity, from: datagram.sender, at: .now))
    }

    /// Acts on the machines' deadlines until cancelled: dials due, broadcasts while a device is
    /// waited for, devices gone, pairing requests ended.
    private func keepTime() async {
        while !Task.isCancelled {
            await clock.wait(until: [links.deadline, devices.deadline].compactMap { $0 }.min())
            let now = ContinuousClock.now
            if let deadline = links.deadline, deadline <= now { act(on: links.tick(at: now)) }
            for event in devices.tick(at: now) {
                switch event {
                case .gone(_, let last):
                    logger.info("KDE Connect device \(last.identity.name) is gone")
                    await intake.events.publish(.peerLost, peerUUID: last.peerID, peer: last.identity.name)
                case .pairing(_, let device, let actions):
                    _ = await write(await perform(actions, for: device), to: device)
                }
            }
        }
    }

    func act(on actions: [KDEConnectLinks<IPAddress>.Action]) {
        for action in actions {
            switch action {
            case .broadcast:
                if isVisible {
                    send(to: discovery.announcingBroadcasts(of: NetworkInterfaces.addresses()).map { .v4($0) })
                }
            case .identity(let address):
                if isVisible { send(to: [address]) }
            case .dial(let identity, let address):
                Task { await self.dial(identity, at: address) }
            }
        }
    }

    /// hexd's identity, with its TCP port, to each of `destinations` (the broadcast address of
    /// every interface beacons go out on, or a device found), at KDE Connect's UDP port.
    private func send(to destinations: [IPAddress]) {
        var identity = own
        identity.tcpPort = listener.port
        let bytes = identity.encoded(id: Self.milliseconds())
        for destination in destinations {
            do {
                try socket.send(bytes, to: destination, port: settings.port)
            } catch {
                logger.limited("kdeconnect send", .warning, "KDE Connect identity to \(destination): \(error)")
            }
        }
    }

    // MARK: DNS-SD

    /// The service type the apps publish and browse (kdeconnect-kde `core/backends/lan/mdnsdiscovery.cpp`,
    /// kdeconnect-android `Backends/LanBackend/MdnsDiscovery.kt`).
    static let serviceType = "_kdeconnect._udp"

    /// hexd's `_kdeconnect._udp` instance, as the apps publish theirs: named by the device ID, at
    /// the TCP port of its links (kdeconnect-android since 1.35.1; no app reads it: a device found
    /// is sent an identity at UDP 1716), its TXT the device's ID, name, type and protocol version.
    private var advert: DNSSDPersona {
        DNSSDPersona(
            type: Self.serviceType, name: own.deviceID, port: listener.port,
            txt: [
                ("id", own.deviceID), ("name", own.name), ("type", own.deviceType.rawValue),
                ("protocol", String(own.protocolVersion)),
            ])
    }

    /// A device DNS-SD found: told hexd's identity by unicast (over IPv4, where the apps listen),
    /// when `KDEConnectLinks` says so; it then dials hexd as it would on hearing a broadcast.
    private func found(_ instance: DNSSDFound) {
        guard !instance.leaving, isVisible, case .v4 = instance.address, !instance.address.isLoopback else { return }
        let id = instance.keys["id"] ?? instance.name
        guard KDEConnectIdentity.isValidDeviceID(id) else { return }
        let actions = links.found(id, at: instance.address, now: .now)
        if !actions.isEmpty {
            logger.debug("DNS-SD found KDE Connect device \(id) at \(instance.address): hexd's identity goes to it")
        }
        act(on: actions)
    }

    /// Whether `identity` is another hexd's persona, as its claim proves (`PersonaClaims`).
    private nonisolated func isHexd(_ identity: KDEConnectIdentity) -> Bool {
        claims.isHexd(KDEConnectID.of(deviceID: identity.deviceID), claim: identity.hexdClaim)
    }

    // MARK: Links

    /// Dials a device heard (hidden, only one paired here), and keeps the link if its handshake
    /// proves the device.
    private nonisolated func dial(_ identity: KDEConnectIdentity, at address: IPAddress) async {
        do {
            guard let port = identity.tcpPort else { throw KDEConnectHandshake.Failure.identity("no TCP port") }
            if await !isVisible, let id = KDEConnectID.of(deviceID: identity.deviceID),
                try await !isPaired(peerID: id)
            {
                throw Refusal(description: "hexd is hidden (hexctl visibility), and the device is not paired")
            }
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
            await dialFailed(identity.deviceID.lowercased())
            logger.limited(
                "kdeconnect dial", .info,
                "cannot link with KDE Connect device \(identity.name) at \(address): \(error)")
        }
    }

    /// A dial ended without a link: the next one waiting may start.
    private func dialFailed(_ key: String) {
        links.dialFailed(key, at: .now)
        act(on: links.tick(at: .now))
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
            let link = try await KDEConnectHandshake.accept(
                socket, own: own, tls: tls, now: Self.milliseconds(), refusing: isHexd)
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
    /// which the device closes itself), then served until it ends. A device paired here must show
    /// the certificate paired, and speak no lower version than it did.
    private nonisolated func keep(_ link: KDEConnectHandshake.Link, from address: IPAddress) async {
        let device = Device(
            identity: link.identity, address: address, version: link.version, certificate: link.certificate,
            publicKey: link.publicKey, linkedAt: .now, outgoing: KDEConnectOutgoing(), socket: link.connection.socket)
        let generation = await devices.trustGeneration
        let paired: Bool
        do {
            paired = try await isPaired(device)
        } catch {
            logger.limited(
                "kdeconnect trust", .warning, "refused a link from KDE Connect device \(device.label): \(error)")
            // A dial of hexd's own that reached it ends as a failure (not dialed again for a while).
            await dialFailed(device.key)
            return
        }
        if !paired, await !isVisible {
            logger.limited(
                "kdeconnect hidden", .info,
                "closed a link with KDE Connect device \(device.label): hexd is hidden, and it is not paired")
            await dialFailed(device.key)
            return
        }
        guard let number = await linkUp(device, paired: paired, readAt: generation) else { return }
        await serve(link, of: device)
        await linkEnded(device, number: number)
    }

    /// Why a device is not linked (or a pairing cannot be kept).
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether the device is paired here: its pin in the store is `paired` with this certificate.
    /// - Throws: `Refusal` when it is paired with another certificate (an impostor, or a device
    ///   reinstalled: `hexctl unpair` forgets the old one), or now speaks a lower version than when
    ///   last linked (a downgrade); a store error.
    private nonisolated func isPaired(_ device: Device) async throws -> Bool {
        guard let pin = try await intake.store.pin(forPeer: device.peerID), pin.trust == .paired else {
            return false
        }
        guard pin.fingerprint == device.certificate.description else {
            throw Refusal(
                description: "it is paired with another certificate (\(pin.fingerprint.prefix(16))…); if it was "
                    + "reinstalled, forget it with hexctl unpair \(device.peerID) and pair again")
        }
        let known = try await intake.store.knownVersion(of: device.peerID)
        if let known, let spoken = Self.version(known), device.version < spoken {
            throw Refusal(
                description: "it spoke protocol \(spoken) when last linked and now speaks \(device.version): "
                    + "a downgrade is refused")
        }
        return true
    }

    /// What the peers listing and the sightings call a version: `KDE Connect 8`.
    static func versionID(_ version: Int) -> String { "KDE Connect \(version)" }

    /// The protocol version a sighting recorded (`versionID`); nil for another text.
    static func version(_ versionID: String) -> Int? {
        let prefix = "KDE Connect "
        guard versionID.hasPrefix(prefix) else { return nil }
        return Int(versionID.dropFirst(prefix.count))
    }

    /// Lists a device whose link is up; nil when the link is not taken: past the cap of unpaired
    /// links, or refused by `KDEConnectDevices` (too many links of the device, another
    /// certificate than its link up's, or its pairing read before the store's pairings changed).
    private func linkUp(_ device: Device, paired: Bool, readAt generation: Int) async -> Int? {
        let id = device.key
        if let refusal = devices.check(id, certificate: device.certificate.description, readAt: generation) {
            // Ends a dial of hexd's own that reached it, as a failure: the device stays dialable.
            links.dialFailed(id, at: .now)
            switch refusal {
            case .impostor:
                logger.limited(
                    "kdeconnect impostor", .warning,
                    "refused a link from \(device.address) claiming KDE Connect device \(device.identity.name): its "
                        + "certificate is not the one of that device's link up")
            case .tooManyLinks, .trustChanged:
                logger.limited(
                    "kdeconnect links", .info,
                    "closed a link with \(device.label): \(KDEConnectDevices<Device>.linksPerDevice) of its links "
                        + "are up, or its pairing changed")
            }
            return nil
        }
        let taken = links.linkUp(id, paired: paired || devices.isPaired(id), at: .now)
        // A dial may have ended: the next one waiting may start.
        act(on: links.tick(at: .now))
        guard taken else {
            logger.limited(
                "kdeconnect cap", .info, "closed a link with \(device.identity.name): too many unpaired links")
            return nil
        }
        // A device back within the grace after its last link ended was never gone.
        let (number, arrived) = devices.add(
            device, of: id, certificate: device.certificate.description, version: device.version, paired: paired)
        if arrived {
            logger.info(
                "KDE Connect device \(device.label), \(device.identity.deviceType.rawValue), protocol \(device.version)"
                    + (paired ? ", paired" : ""))
            await intake.events.publish(
                .peerFound, peerUUID: device.peerID, peer: device.identity.name,
                versionID: Self.versionID(device.version))
        }
        if devices.isPaired(id) { await cameBack(device) }
        return number
    }

    /// A paired device is linked: remembered (its name for `--to`, its version for the downgrade
    /// guard), and its queued sends made due.
    func cameBack(_ device: Device) async {
        await intake.deviceFound(
            id: device.peerID, name: device.identity.name, versionID: Self.versionID(device.version),
            address: device.address.description)
    }

    /// A link ended: its device is gone once no link of it is back within
    /// `KDEConnectDevices.leaveGrace` (`keepTime`).
    private func linkEnded(_ device: Device, number: Int) {
        if devices.ended(device.key, number: number, at: .now) { links.linkDown(device.key) }
    }

    static let pace = LinePace(idle: .seconds(7 * 86_400), grace: .seconds(10), minimumBytesPerSecond: 64 * 1_024)

    /// How long writing one batch of packets may take.
    static let writeTimeout: Duration = .seconds(10)

    /// Serves the link until it ends: reads the device's packets and answers them, and writes what
    /// others queue for the device between them (the link's task alone uses its connection).
    private nonisolated func serve(_ link: KDEConnectHandshake.Link, of device: Device) async {
        let outgoing = device.outgoing
        defer { outgoing.close() }
        while !Task.isCancelled {
            let batches = outgoing.take()
            for (index, batch) in batches.enumerated() {
                let written = await Self.write(batch.lines, on: link)
                batch.done(written)
                guard written else {
                    // The link failed: the batches taken after this one are not written either.
                    for later in batches[(index + 1)...] { later.done(false) }
                    return
                }
            }
            switch await Self.next(from: link, or: outgoing.bell) {
            case .rung:
                continue
            case .ended:
                return
            case .line(let line):
                guard let packet = try? KDEConnectPacket.decode(line) else {
                    logger.limited("kdeconnect packet", .info, "an unreadable packet from \(device.label)")
                    continue
                }
                let replies = await answer(packet, from: device)
                guard await Self.write(replies.map { Array($0.encoded(id: Self.milliseconds()).dropLast()) }, on: link)
                else { return }
            }
        }
    }

    /// Writes packets (each without its line ending) on the link; false when it failed.
    private static func write(_ lines: [[UInt8]], on link: KDEConnectHandshake.Link) async -> Bool {
        guard !lines.isEmpty else { return true }
        return (try? await link.lines.writeLines(lines, timeout: writeTimeout)) != nil
    }

    /// What happened first on a link.
    private enum Next: Sendable {
        case line([UInt8])
        /// Packets were queued (or the link closed): the read waiting was stopped.
        case rung
        /// The link ended (closed, failed, too long a line, or past its pace).
        case ended
    }

    /// The link's task alone uses the connection: while the child reads, the parent only waits.
    private struct Reading: @unchecked Sendable {
        let link: KDEConnectHandshake.Link
    }

    /// The next line from the device, or a ring of `bell`, whichever comes first. A read stopped
    /// by a ring loses nothing: it stops only while it waits for the socket, and the bytes of a
    /// line begun stay in the link's framer. A line that came as the ring did is still returned.
    private static func next(from link: KDEConnectHandshake.Link, or bell: Doorbell) async -> Next {
        let reading = Reading(link: link)
        return await withTaskGroup(of: Next?.self) { group in
            group.addTask {
                // Idle for long (a device that vanished is seen by TCP keepalive), but a line begun
                // must keep coming.
                do {
                    guard case .line(let line)? = try await reading.link.lines.readLine(pace: pace) else {
                        return .ended
                    }
                    return .line(line)
                } catch is CancellationError {
                    return nil
                } catch {
                    return .ended
                }
            }
            group.addTask {
                await bell.wait()
                return Task.isCancelled ? nil : .rung
            }
            var outcome: Next?
            while let next = await group.next() {
                group.cancelAll()
                switch (outcome, next) {
                case (_, nil): break
                case (nil, let next?), (.rung?, let next?): outcome = next
                default: break
                }
            }
            return outcome ?? .rung
        }
    }

    /// What hexd answers a packet with: pairing moves as the person and the protocol say; a paired
    /// device's share is kept; anything else from a device not paired is refused.
    private func answer(_ packet: KDEConnectPacket, from device: Device) async -> [KDEConnectPair] {
        let id = device.key
        // A packet comes on a link, whose device has its pairing (dropped with its last link).
        guard var pairing = devices[pairing: id] else { return [] }
        if let pair = KDEConnectPair(packet) {
            let actions = pairing.received(pair, at: .now, wallClock: Self.seconds())
            devices[pairing: id] = pairing
            return await perform(actions, for: device)
        }
        let (taken, actions) = pairing.otherPacket(at: .now)
        devices[pairing: id] = pairing
        guard taken else {
            logger.limited(
                "kdeconnect unpaired", .info,
                "refused a \(packet.type.clipped(toUTF8: 64)) packet from \(device.label): it is not paired")
            return await perform(actions, for: device)
        }
        await receive(packet, from: device)
        return []
    }

    /// Why the carrier cannot start.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: Clocks

    nonisolated static func milliseconds() -> Int64 {
        Int64(exactly: (Date().timeIntervalSince1970 * 1_000).rounded(.down)) ?? 0
    }

    nonisolated static func seconds() -> Int64 {
        Int64(exactly: Date().timeIntervalSince1970.rounded(.down)) ?? 0
    }
}
