import HexCarrier
import HexEngine
import HexKit
import HexNet
import QuickShareCore

/// hexd as a Quick Share receiver: published as `_FC9F5ED42C8A._tcp` by DNS-SD while hexd is
/// visible, so Android's share sheet (and Google's Windows app) lists it, and a TCP listener where
/// phones connect. `InboundConnection` decides each connection's frames; this actor admits the
/// connections, asks the person about files, and keeps what arrives: texts and links as hexes
/// under the accept policy and the strangers' budgets, files in the downloads folder with a hex
/// naming them. Quick Share has no identity beyond the connection: every sender is a stranger.
package actor QuickShareCarrier {
    /// Connections served at once, and from one address: past them, a newcomer is closed (past the
    /// first, the one that went longest without a frame makes room).
    static let connectionsAtOnce = 16
    static let connectionsPerAddress = 4
    /// Bytes read from a connection at a time: under glibc's threshold for a mapping of its own
    /// (`hexd_return_large_allocations`), so that each read's buffer comes from the heap rather than
    /// from fresh pages the kernel must fault in and clear.
    static let readBytes = 64 << 10
    /// Writing one frame, within this.
    static let writeTimeout: Duration = .seconds(10)
    /// The longest name published: `n=` and the base64 of 18 + 171 bytes of endpoint info fill the
    /// 255 bytes a TXT string holds.
    static let maximumNameBytes = 171

    /// Where phones connect: IPv4 and, on a host with it, IPv6 on the same port; none for a carrier
    /// a test reaches through `receive(over:from:number:progressed:)` alone.
    private let listeners: [StreamListener]
    /// Opens a connection to a receiver: TCP, or a test's memory.
    let connect: @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    let settings: QuickShareSettings
    /// The endpoint ID hexd goes by while it runs (four letters and digits, as Android makes its own).
    nonisolated let endpointID: [UInt8]
    /// What hexd says of itself in DNS-SD and nowhere else: its name and that it is a laptop.
    let info: EndpointInfo
    let intake: any CarrierIntake
    let downloads: IncomingFiles
    let events: EventLog
    let logger: Logger
    private let dnssd: any CarrierDNSSD
    private let connections = ConnectionTable(total: connectionsAtOnce, perAddress: connectionsPerAddress)
    /// Admits connections past the daemon's handshake admission, which every listener of strangers
    /// shares, and the table of connections.
    private nonisolated let strangers: StrangerListener
    /// Why hexd serves on another port than the one asked for; nil when it has it.
    nonisolated let portNote: String?
    /// Offers of files waiting for the person's yes, with the held connections' answers.
    let offers = OfferDesk<Void>()
    /// Connections numbered as they come, for the keys of their offers.
    private var accepted: UInt64 = 0
    /// The receivers DNS-SD found, which sends go to.
    var receivers = ReceiverTable<IPAddress>()
    /// Tells another hexd's instance, which is left to hexd's own protocol.
    let claims: PersonaClaims
    /// Wakes phones nearby while a send to one waits, so that they publish themselves.
    nonisolated let nudge: BluetoothNudge
    /// Rung when a receiver is heard, so that the expiry looks at its lifetime.
    let receiverHeard = Doorbell()

    /// The TCP port of Quick Share connections (0 without a listener).
    nonisolated var port: UInt16 { listeners.first?.port ?? 0 }

    private init(
        listeners: [StreamListener], connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel,
        settings: QuickShareSettings, name: String,
        intake: any CarrierIntake, downloads: IncomingFiles, dnssd: any CarrierDNSSD, claims: PersonaClaims,
        gate: HandshakeGate,
        trimmer: MemoryTrimmer, events: EventLog, portNote: String?, logger: Logger
    ) throws(QuickShareError) {
        self.claims = claims
        (self.listeners, self.connect, self.settings) = (listeners, connect, settings)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        endpointID = try SecureRandom.bytes(4).map { alphabet[Int($0) % alphabet.count] }
        info = EndpointInfo(
            deviceType: .laptop, name: name.clipped(toUTF8: Self.maximumNameBytes), random: try SecureRandom.bytes(16))
        (self.intake, self.downloads, self.dnssd) = (intake, downloads, dnssd)
        strangers = StrangerListener(
            name: "Quick Share", gate: gate, connections: connections, trimmer: trimmer, logger: logger)
        (self.events, self.portNote, self.logger) = (events, portNote, logger)
        nudge = BluetoothNudge(
            enabled: settings.wakesPhones, environment: ProcessInfo.processInfo.environment, logger: logger)
    }

    /// Takes the TCP port asked for, else any the system gives (said once in the log).
    /// - Throws: `SocketError` when no TCP port can be had at all; `QuickShareError` when libcrypto
    ///   gives no random bytes.
    package static func start(
        _ settings: QuickShareSettings, name: String, intake: any CarrierIntake, downloads: IncomingFiles,
        dnssd: any CarrierDNSSD, claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer,
        events: EventLog, logger: Logger
    ) throws -> QuickShareCarrier {
        var note: String?
        let listener: StreamListener
        do {
            listener = try StreamListener.tcp(port: settings.port)
        } catch {
            listener = try StreamListener.tcp(port: 0)
            note = "TCP \(settings.port) is taken (\(error.reasonText)): Quick Share is on TCP \(listener.port)"
            logger.warning(note ?? "")
        }
        let listener6 = try? StreamListener.tcp(address: .anyV6, port: listener.port)
        return try QuickShareCarrier(
            listeners: [listener] + (listener6.map { [$0] } ?? []),
            connect: { endpoint, timeout in try await StreamConnector.tcp(to: endpoint, timeout: timeout) },
            settings: settings, name: name, intake: intake, downloads: downloads, dnssd: dnssd, claims: claims,
            gate: gate, trimmer: trimmer, events: events, portNote: note, logger: logger)
    }

    /// A carrier with no listener and no socket of its own: a test hands it connections
    /// (`receive(over:from:number:progressed:)`) and its sends go through `connect`.
    package static func detached(
        _ settings: QuickShareSettings, name: String, intake: any CarrierIntake, downloads: IncomingFiles,
        dnssd: any CarrierDNSSD, claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer,
        events: EventLog, logger: Logger,
        connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    ) throws -> QuickShareCarrier {
        try QuickShareCarrier(
            listeners: [], connect: connect, settings: settings, name: name, intake: intake, downloads: downloads,
            dnssd: dnssd, claims: claims, gate: gate, trimmer: trimmer, events: events, portNote: nil, logger: logger)
    }

    package func run() async {
        logger.info(
            "Quick Share receiver on TCP \(port) as \(String(decoding: endpointID, as: UTF8.self)), "
                + "published as \(QuickShareService.type) while hexd is visible")
        await dnssd.publish(advert)
        await dnssd.browse(QuickShareService.type) { instance in await self.found(instance) }
        await withTaskGroup(of: Void.self) { group in
            for listener in listeners {
                group.addTask {
                    await self.strangers.run(on: listener) { socket in
                        let number = await self.numberConnection()
                        await self.receive(over: socket, from: socket.remoteEndpoint, number: number) {
                            self.connections.progressed(socket)
                        }
                    }
                }
            }
            group.addTask { await self.expireReceivers() }
            group.addTask { await self.nudge.run() }
        }
    }

    /// The person asked to look for devices again: phones nearby are woken for a while.
    package func refresh() async {
        await nudge.refreshed()
    }

    /// Drops the receivers not heard again within their lifetime, each when its lifetime ends: with
    /// none listed, it sleeps until one is heard (no timer while no receiver is around).
    private func expireReceivers() async {
        while !Task.isCancelled {
            let next = receivers.nextExpiry
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.receiverHeard.wait() }
                if let next { group.addTask { try? await Task.sleep(until: next, tolerance: .seconds(1)) } }
                await group.next()
                group.cancelAll()
            }
            for receiver in receivers.expire(at: .now) {
                logger.info("Quick Share receiver \(receiver.label) (\(receiver.endpointID)) is gone")
                await events.publish(
                    .peerLost, peerUUID: QuickShareID.of(endpointID: receiver.endpointID), peer: receiver.label)
            }
        }
    }

    /// hexd's instance, as Android publishes its own: named by the endpoint ID, its TXT `n` the
    /// endpoint info (NearDrop `PROTOCOL.md`, rquickshare `hdl/mdns.rs`), then hexd's claim on it,
    /// which other hexds read and the apps ignore.
    private var advert: DNSSDPersona {
        let claim = QuickShareID.of(endpointID: String(decoding: endpointID, as: UTF8.self)).flatMap {
            claims.claim(persona: $0)
        }
        let keys = Self.claimKeys
        return DNSSDPersona(
            type: QuickShareService.type, name: QuickShareService.instanceName(endpointID: endpointID), port: port,
            txt: [("n", Base64URL.encode(info.bytes))]
                + (claim.map { [(keys.peer, $0.peer), (keys.key, $0.key), (keys.signature, $0.signature)] } ?? []))
    }

    /// The next connection's number, for the log.
    private func numberConnection() -> UInt64 {
        accepted += 1
        return accepted
    }
}
