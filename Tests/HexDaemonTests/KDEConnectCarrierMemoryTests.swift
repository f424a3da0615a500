import Foundation
import HexCarrier
import HexEngine
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import KDEConnectCore
import Synchronization
import Testing

@testable import HexDaemon
@testable import KDEConnectCarrier

/// How long each step may wait: a guard against a hang, not a speed check. A LAN's deadlines (2 s
/// for a link accepted, 10 s dialed) are too short for a debug build beside hundreds of tests and
/// fuzzers on two cores, so both ends of each link here are given this.
private let patience: Duration = .seconds(30)

/// hexd's KDE Connect carrier, whole, with a real store, linked with a phone held in memory
/// (`MemoryChannel`): the link's plain identity, its TLS handshake with both certificates and
/// protocol 8's identities inside, the pairing the person accepts, then what crosses the link, from
/// the phone's share to the hex in the inbox and from hexd's send to the packet the phone reads.
/// No socket is opened. The phone's side of the link is `KDEConnectHandshake`, as the apps start
/// theirs (`core/backends/lan/lanlinkprovider.cpp`); the netns tests meet kdeconnectd.
@Suite(.timeLimit(.minutes(2))) struct KDEConnectCarrierMemoryTests {
    /// A KDE Connect phone at 192.0.2.9: its certificate (its device ID as common name) and identity.
    private struct Phone {
        static let address = IPAddress("192.0.2.9") ?? .loopback
        static let deviceID = "9a0e0000000000000000000000000009"
        let tls: ForeignTLSContext
        let identity = KDEConnectIdentity(
            deviceID: Phone.deviceID, name: "Pixel", deviceType: .phone, protocolVersion: 8,
            incomingCapabilities: [KDEConnectShare.packetType], outgoingCapabilities: [KDEConnectShare.packetType],
            tcpPort: 1716)
        /// The ID hexd lists it by.
        let id = KDEConnectID.form.prefix + Phone.deviceID

        init(in directory: TemporaryDirectory) throws {
            let (persona, _) = try PersonaIdentity.loadOrCreate(
                keyPath: directory.file("phone.key"), certificatePath: directory.file("phone.crt"), kind: .p256,
                commonName: Phone.deviceID, organization: "KDE", organizationalUnit: "KDE Connect",
                label: "KDE Connect")
            tls = try ForeignTLSContext(persona: persona)
        }

        /// Reads the link's next packet.
        static func packet(on link: KDEConnectHandshake.Link) async throws -> KDEConnectPacket {
            guard case .line(let line)? = try await link.lines.readLine(timeout: patience) else {
                throw MemoryChannel.Ended()
            }
            return try KDEConnectPacket.decode(line)
        }

        /// Asks hexd on `link` to pair; hexd's person accepts, and the phone reads hexd's yes.
        func pair(over link: KDEConnectHandshake.Link, with carrier: KDEConnectCarrier) async throws {
            let asked = KDEConnectPair(pair: true, timestamp: Int64(Date().timeIntervalSince1970))
            try await link.lines.writeLine(asked.encoded(id: 1).dropLast(), timeout: patience)
            // The person answers once the request is listed, as `hexctl pair --accept` would.
            try await waitUntil("hexd's person accepted the phone", timeout: patience) {
                (try? await carrier.trust(.accept, id))?.trust == .paired
            }
            #expect(KDEConnectPair(try await Self.packet(on: link))?.pair == true, "hexd says yes on the link")
        }
    }

    private static func hexd(
        _ home: CarrierHome,
        connect: @escaping @Sendable (Endpoint, Duration) async throws -> any ByteChannel = { endpoint, _ in
            throw Unreachable(endpoint: endpoint)
        }
    ) throws -> KDEConnectCarrier {
        try KDEConnectCarrier.detached(
            KDEConnectSettings(), name: "Grace", keyPath: home.directory.file("kdeconnect.key"),
            certificatePath: home.directory.file("kdeconnect.crt"), claims: home.claims, gate: home.gate,
            trimmer: MemoryTrimmer(), intake: home.intake, downloads: home.incomingFiles, visibility: AlwaysVisible(),
            dnssd: NoDNSSD(), logger: home.logger, deadlines: .init(both: patience), connect: connect)
    }

    @Test func aPhoneThatDialsAndPairsHasItsSharedLinkKept() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        let carrier = try Self.hexd(home)
        let (here, there) = MemoryChannel.pair(client: Endpoint(Phone.address, port: 50000))
        let serving = Task { await carrier.accepted(there, from: Phone.address) }
        let link = try await KDEConnectHandshake.dial(
            here, own: phone.identity, heard: await carrier.own, tls: phone.tls, now: 1, within: patience)
        #expect(link.identity.deviceID == (await carrier.own.deviceID) && link.version == 8)
        try await phone.pair(over: link, with: carrier)
        let share = KDEConnectShare.url("https://example.com/recipe")
        try await link.lines.writeLine(share.encoded(id: 2).dropLast(), timeout: patience)
        try await waitUntil("the shared link is in the inbox", timeout: patience) {
            try await home.inbox().first?.links.map(\.url) == ["https://example.com/recipe"]
        }
        #expect(try await home.intake.store.pin(forPeer: phone.id)?.trust == .paired, "the pairing is stored")
        here.shutdown()
        await serving.value
    }

    @Test func aPhoneHeardIsDialedPairedAndSentAHex() async throws {
        let home = try CarrierHome("Grace")
        let phone = try Phone(in: home.directory)
        // The phone's ends of hexd's connections, with where hexd meant each to go.
        let dialed = Mutex<[(Endpoint, MemoryChannel)]>([])
        let carrier = try Self.hexd(home) { endpoint, _ in
            let (here, there) = MemoryChannel.pair()
            dialed.withLock { $0.append((endpoint, there)) }
            return here
        }
        // Its clock runs, which dials a device heard once its dial is due.
        let running = Task { await carrier.run() }
        defer { running.cancel() }
        await carrier.heard(phone.identity, from: Phone.address)
        try await waitUntil("hexd dials the phone", timeout: patience) { !dialed.withLock(\.isEmpty) }
        let first = dialed.withLock { $0.first }
        let (endpoint, channel) = try #require(first)
        #expect(endpoint == Endpoint(Phone.address, port: 1716), "hexd dials the port the phone announced")
        let link = try await KDEConnectHandshake.accept(
            channel, own: phone.identity, tls: phone.tls, now: 1, within: patience)
        #expect(link.identity.deviceID == (await carrier.own.deviceID))
        try await phone.pair(over: link, with: carrier)
        let hex = HexJM(senderName: "Grace", links: [LinkJM(url: "https://example.com/map", linkDescription: nil)])
        let receipt = try await carrier.deliver(
            .store(hex, versionID: HexdVersion.current, messageID: UUID().uuidString), to: phone.id,
            timeout: patience)
        #expect(receipt.delivery.status == .received)
        let shared = try KDEConnectShare(try await Phone.packet(on: link))
        #expect(shared == .url("https://example.com/map"), "a lone link goes as a URL share")
        channel.shutdown()
    }
}
