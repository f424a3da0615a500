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
/// packets, and acts on the machines' deadlines in one loop (`keepTime`). Its links are dialed,
/// accepted and served in `+Links`. Pairing is the person's (`+Pairing`); a paired device's
/// shares become hexes (`+Receiving`), and hexes go to it as shares (`+Sending`). A device not
/// paired that sends anything else than pairing is answered `pair: false`, as the apps do. It
/// follows the daemon's visibility: hidden, it broadcasts nothing and links with paired devices
/// alone (dialing those it hears, taking their links).
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
        let channel: any ByteChannel

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

    /// Where identities are heard and sent, and where devices dial: none for a carrier a test
    /// reaches through `accepted(_:from:)` and `heard(_:from:)` alone.
    private let socket: DatagramSocket?
    private let listener: StreamListener?
    /// Opens a connection to a device (a link, a payload): TCP with keep-alive probes, or a test's memory.
    let connect: @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    /// How long the start of a link may take, dialed or accepted.
    let deadlines: KDEConnectHandshake.Deadlines
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
    let gate: HandshakeGate
    let trimmer: MemoryTrimmer
    /// hexd's discovery, whose visibility the carrier follows.
    private let visibility: any CarrierVisibility
    /// DNS-SD, through which hexd publishes `_kdeconnect._udp` and finds the devices that do
    /// (neither when hexd runs none: `--mdns off`).
    private let dnssd: any CarrierDNSSD
    private(set) var isVisible = true
    /// Where shares become hexes (under the rules every peer's are kept by), pairings are kept,
    /// and devices are told of (`peerFound`, `peerLost`, `pairRequested`, `paired`).
    let intake: any CarrierIntake
    let logger: Logger
    /// When to dial and broadcast. Any change may bring its deadline forward: `keepTime` starts
    /// its wait over.
    var links: KDEConnectLinks<IPAddress> { didSet { clock.ring() } }
    /// The devices with a link up or within their grace, their pairings (read again from the store
    /// once a device was gone, or the store's pairings changed), and when a device that left is
    /// gone or a request ends.
    var devices = KDEConnectDevices<Device>() { didSet { clock.ring() } }
    /// Rung whenever a machine changes, for `keepTime` to wait for the new deadline.
    private let clock = Doorbell()
    /// The files each paired device shared that wait for their fetch, by device key: fetched one
    /// at a time, apart from the link's reader; a key is here while its device's fetcher runs.
    var fileQueues: [String: [KDEConnectSharedFile]] = [:]
    let connections = ConnectionTable(total: connectionsAtOnce, perAddress: connectionsPerAddress)
    /// The connections its listener holds descriptors for until their links are proved.
    let linkSlots = ConnectionSlots(maximum: connectionsAtOnce + ConnectionSlots.beyondCap)
    /// Identities read from one address a second (twice as many at once), before they are parsed.
    private var datagramBudget = KDEConnectCarrier.identityBudget()

    init(
        socket: DatagramSocket?, listener: StreamListener?,
        connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel,
        deadlines: KDEConnectHandshake.Deadlines = KDEConnectHandshake.Deadlines(), persona: Persona, portNote: String?,
        settings: KDEConnectSettings, discovery: DiscoverySettings,
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
        self.connect = connect
        self.deadlines = deadlines
        (tls, own, ownKey) = (persona.tls, persona.own, persona.ownKey)
        self.settings = settings
        self.discovery = discovery
        self.claims = claims
        self.gate = gate
        self.trimmer = trimmer
        self.logger = logger
        links = KDEConnectLinks(ownDeviceID: persona.own.deviceID)
    }

    /// The devices with a link up (as their newest link describes them), the latest linked first.
    var linkedDevices: [Device] { devices.newestLinks.map(\.link) }

    /// The TCP port of its links (0 without a listener).
    nonisolated var port: UInt16 { listener?.port ?? 0 }

    /// The devices with a link up, and how many of them are paired (`hexctl status`).
    var linkedCounts: (devices: Int, paired: Int) {
        let linked = linkedDevices
        return (linked.count, linked.filter { devices.isPaired($0.key) }.count)
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
            if let socket = self.socket { group.addTask { await self.hear(on: socket) } }
            if let listener = self.listener { group.addTask { await self.serve(on: listener) } }
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
            for (key, device) in devices.allLinks where !devices.isPaired(key) { device.channel.shutdown() }
        }
    }

    // MARK: Broadcasts

    /// Receives identities until cancelled.
    private func hear(on socket: DatagramSocket) async {
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
        heard(identity, from: datagram.sender)
    }

    /// An identity heard from `address` (a broadcast, or a test telling of a device): the device is
    /// dialed when `KDEConnectLinks` says so, unless it is another hexd's persona.
    func heard(_ identity: KDEConnectIdentity, from address: IPAddress) {
        guard !isHexd(identity) else { return }
        act(on: links.heard(identity, from: address, at: .now))
    }

    /// Acts on the machines' deadlines until cancelled: dials due, broadcasts while a device is
    /// waited for, devices gone, pairing requests ended.
    private func keepTime() async {
        await withDiscardingTaskGroup { writes in
            while !Task.isCancelled {
                await clock.wait(until: [links.deadline, devices.deadline].compactMap { $0 }.min())
                let now = ContinuousClock.now
                // Only what is due is ticked: a tick changes its machine, which rings the clock again.
                if let deadline = links.deadline, deadline <= now { act(on: links.tick(at: now)) }
                guard let deadline = devices.deadline, deadline <= now else { continue }
                for event in devices.tick(at: now) {
                    switch event {
                    case .gone(_, let last):
                        logger.info("KDE Connect device \(last.identity.name) is gone")
                        await intake.events.publish(.peerLost, peerUUID: last.peerID, peer: last.identity.name)
                    case .pairing(_, let device, let actions):
                        let packets = await perform(actions, for: device)
                        // Written beside the loop: a device slow to read its link holds no other deadline.
                        writes.addTask { _ = await self.write(packets, to: device) }
                    }
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
        guard let socket else { return }
        var identity = own
        identity.tcpPort = port
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
            type: Self.serviceType, name: own.deviceID, port: port,
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
    nonisolated func isHexd(_ identity: KDEConnectIdentity) -> Bool {
        claims.isHexd(KDEConnectID.of(deviceID: identity.deviceID), claim: identity.hexdClaim)
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
