import HexCarrier
import HexCommandLine
import HexEngine
import HexKit
import HexNet
import Synchronization
import Testing

@testable import HexDaemon
@testable import KDEConnectCarrier
@testable import LocalSendCarrier
@testable import QuickShareCarrier

/// Sending asks each carrier in turn, hexd's own envelope protocol first: which carrier a target
/// is for, what names a target, and what a plan refuses before anything is queued.
@Suite(.timeLimit(.minutes(1))) struct SendServiceTests {
    private static let kdeConnectID = "kdeconnect:0123456789abcdef0123456789abcdef"
    private static let localSendID = "localsend:" + String(repeating: "AB", count: 32)

    /// Every ID has one carrier, and an address typed is hexd's own protocol's.
    @Test func everyTargetHasOneCarrierHexdsOwnFirst() throws {
        let home = try CarrierHome("Ada")
        let sender = Self.sender(home)
        let kinds = sender.entries.map { $0.kind.kind }
        #expect(kinds == [.hexd, LocalSendCarrier.kind, KDEConnectCarrier.kind, QuickShareCarrier.kind])
        let uuid = UUID().uuidString
        let address = try #require(Endpoint(parsing: "127.0.0.1:9"))
        let targets = [
            CarrierTarget(peerID: uuid, label: "Grace"), CarrierTarget(peerID: uuid.lowercased(), label: "Grace"),
            CarrierTarget(peerID: Self.kdeConnectID, label: "Pixel"),
            CarrierTarget(peerID: nil, address: address, label: "127.0.0.1:9"),
            CarrierTarget(peerID: nil, label: "no ID, no address"),
        ]
        let carriers = targets.map { sender.entry(for: $0).map { $0.kind.kind } }
        #expect(carriers == [.hexd, .hexd, KDEConnectCarrier.kind, .hexd, nil])
        #expect(sender.kind(of: uuid) == .hexd && sender.kind(of: Self.localSendID) == LocalSendCarrier.kind)
    }

    /// Beside the kind whose trust flow claims a name, what else it names: a name two hexd peers
    /// share is no namesake of a hexd step (the pairing book tells them apart), and ambiguous for
    /// another kind's; one hexd peer's name is that peer.
    @Test func whatANameAlsoNamesBesideTheKindThatClaimsIt() async throws {
        let home = try CarrierHome("Ada")
        let sender = Self.sender(home)
        let (bob, otherBob, grace) = (UUID().uuidString, UUID().uuidString, UUID().uuidString)
        for (uuid, name, address) in [
            (bob, "Bob", "127.0.0.2"), (otherBob, "Bob", "127.0.0.3"), (grace, "Grace", "127.0.0.4"),
        ] {
            await home.peers.observe([try Self.sighting(uuid, name, at: address)])
        }
        #expect(try await sender.namesake(named: "Bob", besides: .hexd) == nil)
        await #expect(throws: LookupError.self) {
            try await sender.namesake(named: "Bob", besides: QuickShareCarrier.kind)
        }
        #expect(try await sender.namesake(named: "grace", besides: QuickShareCarrier.kind) == .hexdPeer(grace))
        #expect(try await sender.namesake(named: "Pixel", besides: QuickShareCarrier.kind) == nil)
    }

    /// A name two kinds share is refused with what to type instead: a prefix of an ID, or the
    /// whole key of an offer, which no prefix names.
    @Test func anAmbiguousNameSaysWhatToTypeInstead() {
        let device = Namesake.device(of: "KDE Connect", Self.kdeConnectID)
        let offer = QuickShareCarrier.namesake("quickshare-offer:12")
        let toOffer = LookupError.twoKinds("Pixel", device, offer).description
        #expect(
            toOffer.contains("the Quick Share offer quickshare-offer:12;") && toOffer.hasSuffix("quickshare-offer:12)"))
        #expect(
            LookupError.twoKinds("Pixel", offer, device).description.hasSuffix(
                "such as \(Self.kdeConnectID.prefix(18)))"))
    }

    /// A full UUID is a target once a key is pinned to it (the peer may be away); a device's full
    /// ID is one while its carrier starts, and none when it is off; an address always is.
    @Test func whatAFullIDOrAnAddressNames() async throws {
        let home = try CarrierHome("Ada")
        let sender = Self.sender(home)
        let uuid = UUID().uuidString
        await #expect(throws: LookupError.noPeer(uuid)) { try await sender.target(uuid) }
        try await home.service.settleDelivery(
            of: nil, keyProof: .firstUse(peer: uuid, fingerprint: String(repeating: "ab", count: 32)))
        #expect(try await sender.target(uuid.lowercased()) == CarrierTarget(peerID: uuid, label: uuid))
        let address = try #require(Endpoint(parsing: "127.0.0.1:9"))
        #expect(
            try await sender.target("127.0.0.1:9")
                == CarrierTarget(peerID: nil, address: address, label: "127.0.0.1:9"))
        #expect(try await sender.target(Self.localSendID.lowercased()).peerID == Self.localSendID, "LocalSend starts")
        await #expect(throws: LookupError.noPeer(Self.kdeConnectID)) { try await sender.target(Self.kdeConnectID) }
    }

    /// hexd's plan is the route, found before the commit; nil for a peer away. Plaintext where
    /// it is refused is refused then, and so is a device's send while its carrier is off.
    @Test func aPlanIsTheRouteOrARefusalBeforeAnythingIsQueued() async throws {
        let home = try CarrierHome("Ada")
        let address = try #require(Endpoint(parsing: "127.0.0.1:9"))
        let typed = CarrierTarget(peerID: nil, address: address, label: "127.0.0.1:9")
        let plan = try await Self.sender(home).plan(typed, forceLegacy: false)
        #expect((plan?.value as? PeerRoute)?.endpoints == [address])
        let away = CarrierTarget(peerID: UUID().uuidString, label: "Grace")
        #expect(try await Self.sender(home).plan(away, forceLegacy: false) == nil)
        var refusing = WireSettings()
        refusing.plaintext = .refuse
        await #expect {
            try await Self.sender(home, wire: refusing).plan(typed, forceLegacy: false)
        } throws: { error in
            guard case SendError.refused(let why) = error else { return false }
            return why.contains("refuses plaintext")
        }
        let device = CarrierTarget(peerID: Self.kdeConnectID, label: "Pixel")
        await #expect(throws: SendError.refused("KDE Connect is off here (--kdeconnect off)")) {
            try await Self.sender(home).plan(device, forceLegacy: false)
        }
    }

    /// A device's carrier refuses `--legacy` and a target with no ID of its own before it asks its
    /// device, and a delivery asks first what it refuses, then delivers to the ID.
    @Test func aDeviceCarrierRefusesWhatOnlyHexdTakesAndDeliversByID() async throws {
        let carrier = Recording()
        let device = CarrierTarget(peerID: "recording:pixel", label: "Pixel")
        await #expect(throws: SendError.refused("--legacy is hexd's own protocol; Pixel is not hexd")) {
            try await carrier.plan(device, legacy: true)
        }
        let address = try #require(Endpoint(parsing: "127.0.0.1:9"))
        await #expect(throws: SendError.refused("127.0.0.1:9 is not a Recording device")) {
            try await carrier.plan(CarrierTarget(peerID: nil, address: address, label: "127.0.0.1:9"), legacy: false)
        }
        #expect(carrier.asked.all.isEmpty)
        let alert = Envelope.alert("hello", versionID: HexdVersion.current, messageID: UUID().uuidString)
        await #expect(throws: SendError.undelivered("recorded")) {
            try await carrier.deliver(CarrierSend(alert, to: device, legacy: false, timeout: .seconds(1)))
        }
        #expect(carrier.asked.all == ["refuse? recording:pixel", "deliver recording:pixel"])
    }

    /// A hexd peer's beacon heard from `address`, unsigned.
    private static func sighting(_ uuid: String, _ name: String, at address: String) throws -> Sighting {
        Sighting(
            kind: .present, uuid: uuid, name: name, versionID: HexdVersion.current, instance: "I1",
            address: try #require(IPAddress(address)), port: 18_521, interval: .seconds(2), capabilities: ["ack"],
            fingerprint: nil, isSigned: false)
    }

    /// A send service over `home`'s store and peers, with LocalSend starting and the other carriers off.
    private static func sender(_ home: CarrierHome, wire: WireSettings = WireSettings()) -> SendService {
        var configuration = DaemonConfiguration(dataDirectory: DataDirectory(explicit: "/unused", environment: [:]))
        configuration.carriers[KDEConnectSettings.self].enabled = false
        configuration.carriers[QuickShareSettings.self].enabled = false
        let envelopes = EnvelopeCarrier(
            wire: wire, tls: nil, directory: home.peers, service: home.service, logger: home.logger,
            pool: ConnectionPool(), gate: home.gate)
        return SendService(
            envelopes: envelopes, carriers: ForeignCarrierStart.slots(configuration), service: home.service)
    }
}

/// A device carrier that keeps what it is asked, and delivers nothing.
private struct Recording: DeviceCarrier {
    static let name = "Recording"
    static let kind = PeerKind(declaring: "recording")
    static let idForms = [
        PeerIDForm(kind: kind, prefix: "recording:") {
            PeerIDForm.isWord($0, lengths: 1...16, dashAndUnderscore: false) ? $0 : nil
        }
    ]

    /// What it was asked, in order.
    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func add(_ line: String) { lines.withLock { $0.append(line) } }
    }

    let asked = Log()

    static func attemptTimeout(asked: Duration) -> Duration { asked }

    func target(named text: String) async -> CarrierTarget? { nil }

    func refuseUnlessAllowed(_ peerID: String) async throws(SendError) { asked.add("refuse? \(peerID)") }

    func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> CarrierReceipt
    {
        asked.add("deliver \(peerID)")
        throw .undelivered("recorded")
    }

    func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery {
        throw .refused("no files")
    }
}
