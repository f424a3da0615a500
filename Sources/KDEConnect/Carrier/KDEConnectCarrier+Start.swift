import FoundationEssentials
import HexCarrier
import HexNet
import HexTLS
import KDEConnectCore

/// How a KDE Connect carrier comes to be: the daemon's, with its persona and KDE Connect's ports
/// (or the next free ones), or a test's, with no socket of its own.
extension KDEConnectCarrier {
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
        let persona = try Persona(
            name: name, keyPath: keyPath, certificatePath: certificatePath, claims: claims, logger: logger)
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
        return KDEConnectCarrier(
            socket: socket, listener: listener,
            connect: { endpoint, timeout in
                let socket = try await StreamConnector.tcp(to: endpoint, timeout: timeout)
                // Probed when idle: a link (or a payload's connection) whose device vanished without a
                // word is noticed in 25 s.
                try? socket.keepAlive(idle: 10, interval: 5, probes: 3)
                return socket
            }, persona: persona, portNote: notes.isEmpty ? nil : notes.joined(separator: "; "),
            settings: settings, discovery: discovery, claims: claims, gate: gate, trimmer: trimmer, intake: intake,
            downloads: downloads, visibility: visibility, dnssd: dnssd, logger: logger)
    }

    /// A carrier with no socket of its own: a test hands it the connections devices open
    /// (`accepted(_:from:)`) and tells it of the devices it hears (`heard(_:from:)`); its own
    /// connections go through `connect`, and the start of a link has `deadlines`. `run()` keeps its
    /// time (dials due, devices gone).
    static func detached(
        _ settings: KDEConnectSettings, name: String, keyPath: String, certificatePath: String,
        claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer, intake: any CarrierIntake,
        downloads: IncomingFiles, visibility: any CarrierVisibility, dnssd: any CarrierDNSSD, logger: Logger,
        deadlines: KDEConnectHandshake.Deadlines,
        connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    ) throws -> KDEConnectCarrier {
        let persona = try Persona(
            name: name, keyPath: keyPath, certificatePath: certificatePath, claims: claims, logger: logger)
        return KDEConnectCarrier(
            socket: nil, listener: nil, connect: connect, deadlines: deadlines, persona: persona,
            portNote: nil, settings: settings,
            discovery: DiscoverySettings(), claims: claims, gate: gate, trimmer: trimmer, intake: intake,
            downloads: downloads, visibility: visibility, dnssd: dnssd, logger: logger)
    }

    /// hexd as a KDE Connect device: its persona (made once, its common name a new device ID: 32 hex
    /// digits, as the current apps make), and the identity it writes on a link.
    struct Persona {
        let tls: ForeignTLSContext
        let own: KDEConnectIdentity
        let ownKey: [UInt8]

        /// - Throws: `TLSError` when the persona cannot be read or made, or names no valid device ID.
        init(name: String, keyPath: String, certificatePath: String, claims: PersonaClaims, logger: Logger) throws {
            let newID = String(UUID().uuidString.filter { $0 != "-" }).lowercased()
            let (persona, created) = try PersonaIdentity.loadOrCreate(
                keyPath: keyPath, certificatePath: certificatePath, kind: .p256, commonName: newID,
                organization: "KDE", organizationalUnit: "KDE Connect", label: "KDE Connect")
            guard let deviceID = persona.commonName, KDEConnectIdentity.isValidDeviceID(deviceID),
                let ownKey = persona.publicKeyDER
            else {
                throw TLSError(
                    "read the KDE Connect identity", reason: "\(certificatePath) names no KDE Connect device ID")
            }
            if created { logger.info("made a KDE Connect identity: device ID \(deviceID)") }
            own = KDEConnectIdentity(
                deviceID: deviceID, name: name, deviceType: .desktop,
                protocolVersion: KDEConnectIdentity.protocolVersions.upperBound,
                incomingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"],
                outgoingCapabilities: [KDEConnectShare.packetType, "kdeconnect.ping"],
                hexdClaim: KDEConnectID.of(deviceID: deviceID).flatMap { claims.claim(persona: $0) })
            (tls, self.ownKey) = (try ForeignTLSContext(persona: persona), ownKey)
        }
    }
}
