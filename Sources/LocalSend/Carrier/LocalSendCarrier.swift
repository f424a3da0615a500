import Glibc
import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import HexWeb
import LocalSendCore

/// hexd as a LocalSend device (LocalSend's protocol 2.x, as its 1.18 apps speak it): announced on
/// LocalSend's multicast group where beacons go, an HTTPS API that takes `register` and `info`,
/// and the devices it proved listed beside hexd's peers. `LocalSendPresence` decides; this actor
/// moves the datagrams and the HTTPS requests. It follows the daemon's visibility: hidden, it
/// announces nothing, answers no announcement, and closes unanswered the connections that ask
/// `register` or `info`; what a device that knows its address sends is still taken.
package actor LocalSendCarrier {
    /// LocalSend's IPv4 multicast group, 224.0.0.167.
    static let group = IPv4Address(224, 0, 0, 167)
    /// The IPv6 group LocalSend 1.18 announces on beside IPv4 (its own extension), ff12::fd3a:e420.
    static let group6 = IPv6Address("ff12::fd3a:e420")
    /// The LocalSend protocol version hexd speaks: 2.2, whose clients show a certificate.
    static let protocolVersion = "2.2"
    /// HTTPS connections served at once, and from one address: past the first, the connection
    /// that went longest without progress (a request read, an upload's bytes) is closed for a
    /// newcomer (one that holds its place idle makes room first); past the second, a newcomer is
    /// closed at once (one host cannot take every place). The same rule as hexd's envelope
    /// listener (`ConnectionTable`).
    static let connectionsAtOnce = 32
    static let connectionsPerAddress = 4
    /// TLS handshakes under way at most, fewer than the connections: past it, the one that began
    /// longest ago is closed (a storm of bare ClientHellos closes its own).
    static let handshakesAtOnce = 16
    /// A connection's handshake and request, all within this.
    static let connectionDeadline: Duration = .seconds(30)
    /// Writing an answer, within this.
    static let answerWriteTimeout: Duration = .seconds(10)

    /// How long the start of a connection may take each way: a LAN's, or a test's on a loaded machine.
    struct Deadlines: Sendable {
        /// A device's TLS handshake with hexd's API.
        var handshake: Duration = .seconds(10)
        /// hexd's connection and TLS handshake to a device, whatever the request's timeout; and its
        /// whole `register`.
        var dial: Duration = .seconds(10)

        init() {}

        /// Both ways within `time`.
        init(both time: Duration) { (handshake, dial) = (time, time) }
    }
    /// Announcements read from one address, a second (Protocol.md 16.2).
    static let announcementsPerSecond = 20

    /// The budget announcements are read within, before they are parsed.
    static func announcementBudget() -> DatagramBudget<IPAddress> {
        DatagramBudget(rate: announcementsPerSecond)
    }

    /// Where announcements are heard and sent, and where devices connect: none for a carrier a
    /// test reaches through `answer(_:)` alone.
    private let socket: DatagramSocket?
    private let listener: StreamListener?
    /// The IPv6 socket and listener, on the same ports; nil on a host without IPv6.
    private let socket6: DatagramSocket?
    private let listener6: StreamListener?
    let client: LocalSendClient
    /// How long the start of a connection may take.
    let deadlines: Deadlines
    /// Stores what devices send, as every carrier does, and is told of each device found, which
    /// the outbox follows.
    let intake: any CarrierIntake
    private let discovery: DiscoverySettings
    /// hexd's discovery, whose visibility the carrier follows.
    private let visibility: any CarrierVisibility
    private(set) var isVisible = true
    let settings: LocalSendSettings
    private let name: String
    let events: EventLog
    let logger: Logger
    /// Why hexd serves on another port than LocalSend's, or hears no announcement, said once; nil
    /// when it has LocalSend's ports.
    let portNote: String?
    var presence: LocalSendPresence<IPAddress>
    /// The upload session under way, with who offered what.
    var reception = LocalSendReception<IPAddress, Offer>()
    /// The files each session under way has saved so far, by session id, with its offer.
    var received: [String: (offer: Offer, files: [IncomingFiles.Saved])] = [:]
    /// hexd's own sessions on devices, under way, by the device's address and the session id it
    /// gave (a device names its own ids: another may name the same): a device's person may cancel
    /// one (`/cancel` with that id), which stops its upload at once.
    var sending: [OutgoingSession.Key: OutgoingSession] = [:]
    /// Where uploaded files land.
    let downloads: IncomingFiles
    /// The PIN senders must give (`--localsend-pin`), and who gave wrong ones.
    var pinGate: LocalSendPinGate<IPAddress>
    /// Offers waiting for the person's yes, by device ID, each with the certificate a yes pairs
    /// and the address it came from (only it may cancel the offer).
    let offers = OfferDesk<(certificate: String, address: String)>()
    /// The largest lone text file whose first line describes the hex it makes and whose
    /// addresses are its links (LocalSend's command-line senders send a note as such a file).
    static let describingTextBytes = 65_536
    /// The path of offers, which may wait for the person's answer.
    static let preparePath = "/api/localsend/v2/prepare-upload"
    /// The path of uploads, whose bodies are read as they come.
    static let uploadPath = "/api/localsend/v2/upload"
    /// The connections served now, and those in their TLS handshake.
    let connections = ConnectionTable(total: connectionsAtOnce, perAddress: connectionsPerAddress)
    let handshakes = HandshakeTable(capacity: handshakesAtOnce)
    /// The daemon's admission of handshakes, which every TLS listener shares.
    let gate: HandshakeGate
    /// Admits the API's connections, each served by `answer`.
    private nonisolated let strangers: StrangerListener
    /// Announcements taken from one address per second (twice as many at once), before they are read.
    private var datagramBudget = LocalSendCarrier.announcementBudget()

    /// Tells another hexd's persona, which is left to hexd's own protocol.
    private let claims: PersonaClaims
    /// hexd's signed claim on its persona, in every description of itself.
    private let ownClaim: PersonaClaim?
    /// The model hexd describes itself as, which no LocalSend app uses: a person sees what it is.
    static let model = "hexd"

    /// The persona's fingerprint as LocalSend writes it: 64 upper-case hex digits.
    nonisolated var fingerprint: String { client.tls.persona.fingerprint.description.uppercased() }
    /// The TCP port of hexd's HTTPS API for LocalSend, as hexd describes itself.
    nonisolated let port: UInt16

    init(
        socket: DatagramSocket?, listener: StreamListener?, socket6: DatagramSocket?, listener6: StreamListener?,
        port: UInt16, connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel,
        deadlines: Deadlines = Deadlines(),
        tls: ForeignTLSContext, claims: PersonaClaims, discovery: DiscoverySettings,
        visibility: any CarrierVisibility, intake: any CarrierIntake, downloads: IncomingFiles,
        settings: LocalSendSettings, name: String, gate: HandshakeGate, trimmer: MemoryTrimmer, events: EventLog,
        portNote: String?, logger: Logger
    ) {
        self.gate = gate
        strangers = StrangerListener(
            name: "LocalSend API", gate: gate, connections: connections, trimmer: trimmer, logger: logger)
        self.downloads = downloads
        pinGate = LocalSendPinGate(pin: settings.pin)
        self.visibility = visibility
        self.intake = intake
        self.socket = socket
        self.listener = listener
        self.socket6 = socket6
        self.listener6 = listener6
        self.port = port
        self.deadlines = deadlines
        client = LocalSendClient(tls: tls, connect: connect, connectTimeout: deadlines.dial)
        self.claims = claims
        ownClaim = LocalSendID.certified.id(tls.persona.fingerprint.description).flatMap {
            claims.claim(persona: $0)
        }
        self.discovery = discovery
        self.settings = settings
        self.name = name
        self.events = events
        self.portNote = portNote
        self.logger = logger
        // A device heard over both families stays at its IPv4 address: its address would otherwise
        // flip at each announcement.
        presence = LocalSendPresence(ownFingerprint: tls.persona.fingerprint.description) { listed, heard in
            if case .v4 = listed, case .v6 = heard { true } else { false }
        }
    }

    /// The LocalSend devices listed now, the latest heard first.
    var devices: [LocalSendPresence<IPAddress>.Device] { presence.devices }

    /// The device a user means (`DeviceNaming`): its ID, its alias, or a prefix of its ID or of its
    /// certificate's fingerprint.
    func device(matching text: String) -> LocalSendPresence<IPAddress>.Device? {
        DeviceNaming.device(
            named: text, among: presence.devices, forms: Self.idForms, id: \.peerID, name: \.description.alias)
    }

    /// Asks the LAN who is there now (`hexctl peers --refresh`).
    package func refresh() async {
        await perform(presence.refresh(at: .now))
    }

    package nonisolated func run() async {
        let changes = await events.watch(since: .max, kinds: [.visibilityChanged])
        await followVisibility()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { await self.followVisibility() }
            }
            if let socket = self.socket { group.addTask { await self.hear(socket) } }
            if let listener = self.listener {
                group.addTask { await self.strangers.run(on: listener) { await self.answer($0) } }
            }
            if let socket6 = self.socket6 { group.addTask { await self.hear6(socket6) } }
            if let listener6 = self.listener6 {
                group.addTask { await self.strangers.run(on: listener6) { await self.answer($0) } }
            }
        }
    }

    /// Takes the daemon's visibility: shown again, hexd announces itself at once.
    private func followVisibility() async {
        let wasVisible = isVisible
        isVisible = await visibility.isVisible
        if isVisible && !wasVisible { await perform(presence.resume(at: .now)) }
    }

    // MARK: Multicast

    /// Receives announcements until cancelled, acting on the schedule's deadlines between them.
    private func hear(_ socket: DatagramSocket) async {
        presence.start(at: .now)
        while !Task.isCancelled {
            do {
                let longest = LocalSendDevice.maximumSize + 1
                if let datagram = try await socket.receive(maximumLength: longest, before: presence.deadline) {
                    await take(datagram)
                }
                if let deadline = presence.deadline, deadline <= .now {
                    await perform(presence.tick(at: .now))
                    // An upload session its sender abandoned: the files that landed become their hex.
                    reception.expire(at: .now)
                    await keepEndedSessions()
                }
            } catch is CancellationError {
                return
            } catch {
                logger.limited("localsend receive", .warning, "LocalSend multicast: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Receives announcements on LocalSend's IPv6 group until cancelled (the IPv4 socket's `hear`
    /// keeps the time).
    private func hear6(_ socket6: DatagramSocket) async {
        while !Task.isCancelled {
            do {
                await take(try await socket6.receive(maximumLength: LocalSendDevice.maximumSize + 1))
            } catch is CancellationError {
                return
            } catch {
                logger.limited("localsend receive6", .warning, "LocalSend IPv6 multicast: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One announcement: at most 20 a second from an address are read, and only when visible.
    private func take(_ datagram: DatagramSocket.Datagram) async {
        guard datagramBudget.admit(datagram.sender, at: .now) else { return }
        guard !datagram.truncated, let device = LocalSendDevice.decode(datagram.bytes) else {
            logger.limited("localsend datagram", .debug, "an unreadable LocalSend datagram from \(datagram.sender)")
            return
        }
        await heard(device, from: datagram.sender)
    }

    /// An announcement read from `address` (or a test telling of a device): taken while visible,
    /// unless it is another hexd's persona.
    func heard(_ device: LocalSendDevice, from address: IPAddress) async {
        if isVisible, !isHexd(device) { await perform(presence.heard(device, from: address, at: .now)) }
    }

    /// Whether `device` is another hexd's persona, as its claim proves (`PersonaClaims`): that
    /// daemon is met by hexd's own protocol, and is neither registered with nor listed here.
    nonisolated func isHexd(_ device: LocalSendDevice) -> Bool {
        claims.isHexd(LocalSendPresence<IPAddress>.id(of: device), claim: device.hexdClaim)
    }

    func perform(_ actions: [LocalSendPresence<IPAddress>.Action]) async {
        for action in actions {
            switch action {
            case .announce:
                if isVisible { announce() }
            case .register(let device, let address):
                Task { await self.register(with: device, at: address) }
            case .found(let device):
                logger.info(
                    "LocalSend device \(device.description.alias.clipped(toUTF8: 80)) at \(device.address), "
                        + (device.isPlainHTTP
                            ? "encryption off (plain HTTP)" : "fingerprint \(device.fingerprint.prefix(16))"))
                let versionID = "LocalSend " + device.description.version
                await events.publish(
                    .peerFound, peerUUID: device.peerID, peer: device.description.alias,
                    versionID: versionID)
                await intake.deviceFound(
                    id: device.peerID, name: device.description.alias, versionID: versionID,
                    address: device.address.description)
            case .updated:
                break
            case .announcedAgain(let device):
                // Back (an app that started announces so): what waits for it may go now.
                await intake.deviceHeard(id: device.peerID)
            case .lost(let device):
                logger.info("LocalSend device \(device.description.alias.clipped(toUTF8: 80)) is gone")
                await events.publish(
                    .peerLost, peerUUID: device.peerID, peer: device.description.alias)
            }
        }
    }

    /// hexd as it describes itself to LocalSend devices.
    func ownDevice(announce: Bool?) -> LocalSendDevice {
        LocalSendDevice(
            alias: name, version: Self.protocolVersion, deviceModel: Self.model, deviceType: .headless,
            fingerprint: fingerprint, port: port, scheme: .https, download: false, announce: announce,
            hexdClaim: ownClaim)
    }

    /// Multicasts hexd's announcement on every interface beacons go out on.
    private func announce() {
        let bytes = ownDevice(announce: true).encoded()
        if let socket { multicast(bytes, on: socket) }
        // Over IPv6 only where hexd's API answers on IPv6 too.
        guard let socket6, listener6 != nil, let group6 = Self.group6, discovery.broadcastAddresses.isEmpty else {
            return
        }
        let links = NetworkInterfaces.multicastTargets(
            of: NetworkInterfaces.ipv6Links(), group: group6, selection: discovery.interfaces)
        for case .v6(let destination)? in links.map(\.broadcast) {
            do {
                try socket6.join(group6, interface: destination.scope)
            } catch {
                logger.limited("localsend join6", .warning, "LocalSend IPv6 multicast: \(error)")
            }
            do {
                try socket6.send(bytes, to: .v6(destination), port: settings.port)
            } catch {
                logger.limited("localsend send6", .warning, "LocalSend IPv6 announcement: \(error)")
            }
        }
    }

    /// Multicasts `bytes` on LocalSend's IPv4 group, on every interface beacons go out on.
    private func multicast(_ bytes: [UInt8], on socket: DatagramSocket) {
        for interface in discovery.announcingInterfaces(of: NetworkInterfaces.addresses()) {
            let index = if_nametoindex(interface)
            guard index != 0 else { continue }
            // Joined to hear the devices there; a join refused (the system's cap on memberships)
            // still lets hexd be heard.
            do {
                try socket.join(Self.group, interface: index)
            } catch {
                logger.limited("localsend join", .warning, "LocalSend multicast on \(interface): \(error)")
            }
            do {
                try socket.send(bytes, to: Self.group, port: settings.port, interface: index)
            } catch {
                logger.limited("localsend send", .warning, "LocalSend announcement on \(interface): \(error)")
            }
        }
    }

    /// Registers hexd with the device at `address`; when its certificate is the one it claims, it
    /// is proven. A device whose encryption is off is registered with over plain HTTP (what hexd
    /// says of itself is no secret), and is listed when its answer claims the same fingerprint.
    private func register(with device: LocalSendDevice, at address: IPAddress) async {
        let endpoint = Endpoint(address, port: device.port ?? LocalSendDevice.defaultPort)
        let request = HTTPRequest(
            method: "POST", path: "/api/localsend/v2/register",
            headers: HTTPHeaders([("Content-Type", "application/json")]), body: ownDevice(announce: nil).encoded())
        let plain = device.scheme == .http
        do {
            let response = try await client.send(
                request, to: endpoint, over: plain ? .plain : .pinned(device.fingerprint),
                answerLimit: LocalSendDevice.maximumSize, timeout: deadlines.dial)
            guard response.status == 200 else {
                throw LocalSendError.refused(status: response.status, "\(endpoint) refused hexd's register")
            }
            // The answer describes the device as it is now; the certificate proved the fingerprint.
            let answer = LocalSendDevice.decode(response.body)
            // Over plain HTTP the answer is all there is: it must claim what was announced.
            if plain && answer?.fingerprint != device.fingerprint {
                throw LocalSendError.impostor("\(endpoint) did not answer as the device it announced")
            }
            var described = answer ?? device
            described.fingerprint = device.fingerprint
            described.port = device.port
            described.scheme = plain ? .http : .https
            guard !isHexd(described) else { return }
            await perform(presence.proven(described, at: address, now: .now))
        } catch {
            logger.limited(
                "localsend register", .debug, "cannot register with LocalSend device at \(endpoint): \(error)")
        }
    }
}
