import Foundation
import HexCarrier
import HexCommandLine
import HexEngine
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport

@testable import HexDaemon

/// What a carrier driven in memory keeps things in, as hexd's own: a real store in a fresh data
/// directory, the intake every carrier stores through, a downloads folder, and hexd's identity
/// (which signs its persona claims).
struct CarrierHome {
    let directory: TemporaryDirectory
    let service: HexService
    let events: EventLog
    /// The hexd peers it lists: none, unless a test adds them.
    let peers: PeerDirectory
    let intake: Intake
    let downloads: String
    let identity: TLSIdentity
    let logger = Logger(level: .error)

    init(_ name: String) throws {
        // As the daemon does before any carrier starts: `localsend:…` and `kdeconnect:…` are IDs.
        ForeignCarrierStart.registerIDForms()
        directory = try TemporaryDirectory()
        downloads = directory.file("Downloads")
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        service = try HexService(
            dataDirectory: DataDirectory(explicit: directory.path, environment: [:]), name: name, deviceID: nil,
            versionID: HexdVersion.current, logger: logger)
        events = EventLog()
        peers = PeerDirectory(
            ownUUID: UUID().uuidString, capacity: 64, service: service, events: events, logger: logger)
        intake = Intake(service: service, directory: peers, events: events, arrivals: ArrivalFeed(), logger: logger)
        identity = try TLSIdentity.loadOrCreate(
            keyPath: directory.file("device.key"), certificatePath: directory.file("device.crt"), commonName: name
        ).0
    }

    /// Where files land, floored at nothing.
    var incomingFiles: IncomingFiles { IncomingFiles(folder: DownloadsFolder(path: downloads), floor: .bytes(0)) }

    /// The daemon's handshake admission, with room for every test's connections.
    var gate: HandshakeGate { HandshakeGate(budgets: .init(strangerHandshakes: 64), logger: logger) }

    var claims: PersonaClaims { PersonaClaims(signer: identity) }

    /// What the inbox holds, newest first.
    func inbox() async throws -> [Hex] {
        var hexes: [Hex] = []
        for summary in try await service.summaries(in: .inbox, after: nil, limit: 10, fieldCharacters: 200) {
            hexes.append(try await service.show(summary.id.uppercaseText))
        }
        return hexes
    }
}

/// What a carrier that reaches no one hears when it connects.
struct Unreachable: Error {
    let endpoint: Endpoint
}

/// hexd visible, as it is by default.
struct AlwaysVisible: CarrierVisibility {
    var isVisible: Bool { true }
}
