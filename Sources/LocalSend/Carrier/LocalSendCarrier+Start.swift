import HexCarrier
import HexNet
import HexTLS
import LocalSendCore

/// How a LocalSend carrier comes to be: the daemon's, with its persona and LocalSend's ports (or the
/// next free ones), or a test's, with no socket of its own.
extension LocalSendCarrier {
    /// Loads or makes the persona, and takes the multicast port and a TCP port: LocalSend's when it
    /// is free, else the next free one (a LocalSend app on this host keeps its own, and is said
    /// once to be there).
    /// - Throws: `TLSError` when the persona cannot be read or made, `SocketError` when not even an
    ///   ephemeral UDP port can be had, `LocalSendError` when no TCP port can.
    package static func start(
        _ settings: LocalSendSettings, discovery: DiscoverySettings, visibility: any CarrierVisibility,
        intake: any CarrierIntake, downloads: IncomingFiles, dataDirectory: DataDirectoryPaths, name: String,
        claims: PersonaClaims, gate: HandshakeGate, trimmer: MemoryTrimmer, events: EventLog, logger: Logger
    ) throws -> LocalSendCarrier {
        let (persona, created) = try PersonaIdentity.loadOrCreate(
            keyPath: dataDirectory.key, certificatePath: dataDirectory.certificate, commonName: "hexd",
            label: "LocalSend")
        if created {
            logger.info("made a LocalSend persona: fingerprint \(persona.fingerprint.description.uppercased())")
        }
        var notes: [String] = []
        // A program that took the port without sharing it: hexd still announces (from another
        // port) and is registered with by the devices that hear it, but hears none of them.
        let (socket, refusal) = try DatagramSocket.sharing(port: settings.port)
        if let refusal {
            notes.append(
                "UDP \(settings.port) is taken without sharing (\(refusal)): hexd hears no LocalSend announcement")
        }
        var listener: StreamListener?
        var note: String?
        var failure: (any Error)?
        // LocalSend's port, the 15 after it, then any the system gives.
        let candidates = (0..<16).map { Int(settings.port) + $0 }.filter { $0 <= Int(UInt16.max) } + [0]
        for port in candidates {
            do {
                listener = try StreamListener.tcp(port: UInt16(port))
                break
            } catch {
                failure = failure ?? error
                note = note ?? "TCP \(settings.port) is taken (a LocalSend app on this host?)"
            }
        }
        guard let listener else {
            throw LocalSendError.unreachable(
                "cannot listen for LocalSend on any TCP port: \(failure.map { "\($0)" } ?? "")")
        }
        if let taken = note {
            notes.append("\(taken): hexd's LocalSend API is on TCP \(listener.port), announced as such")
        }
        notes.forEach { logger.warning($0) }
        // IPv6 beside, on the same ports: LocalSend 1.18's group, and the API for devices found there.
        var socket6: DatagramSocket?
        var listener6: StreamListener?
        do {
            socket6 = try DatagramSocket(address: .anyV6, port: socket.port)
            listener6 = try StreamListener.tcp(address: .anyV6, port: listener.port)
        } catch {
            logger.info("LocalSend goes over IPv4 only here: \(error)")
        }
        return LocalSendCarrier(
            socket: socket, listener: listener, socket6: socket6, listener6: listener6, port: listener.port,
            connect: { endpoint, timeout in try await StreamConnector.tcp(to: endpoint, timeout: timeout) },
            tls: try ForeignTLSContext(persona: persona), claims: claims, discovery: discovery,
            visibility: visibility, intake: intake, downloads: downloads, settings: settings,
            name: name, gate: gate, trimmer: trimmer, events: events,
            portNote: notes.isEmpty ? nil : notes.joined(separator: "; "), logger: logger)
    }

    /// A carrier with no socket of its own, its persona `persona`: a test hands it the connections
    /// devices open (`answer(_:)`) and tells it of the announcements it hears (`heard(_:from:)`); its
    /// requests go through `connect`, it describes its API as on `port`, and the start of a
    /// connection has `deadlines`. Nothing keeps its time (the IPv4 socket's wait does): devices
    /// listed are not lost, nor sessions abandoned expired.
    static func detached(
        _ settings: LocalSendSettings, persona: PersonaIdentity, port: UInt16, visibility: any CarrierVisibility,
        intake: any CarrierIntake, downloads: IncomingFiles, name: String, claims: PersonaClaims, gate: HandshakeGate,
        trimmer: MemoryTrimmer, events: EventLog, logger: Logger, deadlines: Deadlines,
        connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    ) throws -> LocalSendCarrier {
        LocalSendCarrier(
            socket: nil, listener: nil, socket6: nil, listener6: nil, port: port, connect: connect,
            deadlines: deadlines,
            tls: try ForeignTLSContext(persona: persona), claims: claims, discovery: DiscoverySettings(),
            visibility: visibility, intake: intake, downloads: downloads, settings: settings, name: name, gate: gate,
            trimmer: trimmer, events: events, portNote: nil, logger: logger)
    }

    /// The two files of the persona.
    package struct DataDirectoryPaths: Sendable {
        let key: String
        let certificate: String

        package init(key: String, certificate: String) { (self.key, self.certificate) = (key, certificate) }
    }
}
