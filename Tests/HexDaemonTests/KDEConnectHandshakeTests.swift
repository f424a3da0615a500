import HexHarness
import HexKit
import HexNet
import HexTLS
import KDEConnectCore
import Testing

@testable import HexDaemon
@testable import KDEConnectCarrier

/// The start of a KDE Connect link over real loopback sockets and real TLS, each side a persona
/// like the apps' (EC P-256, the device ID as common name): the roles inverted, protocol 8's
/// identities inside TLS, and a link refused when the certificate, the target or the identity
/// line is not what the protocol says.
@Suite(.timeLimit(.minutes(2))) struct KDEConnectHandshakeTests {
    private static let alice = "a11ce0000000000000000000000000aa"
    private static let bob = "b0b00000000000000000000000000bbb"

    private static func tls(_ commonName: String, in directory: TemporaryDirectory) throws -> ForeignTLSContext {
        let (persona, _) = try PersonaIdentity.loadOrCreate(
            keyPath: directory.file("\(commonName).key"), certificatePath: directory.file("\(commonName).crt"),
            kind: .p256, commonName: commonName, organization: "KDE", organizationalUnit: "KDE Connect",
            label: "KDE Connect")
        return try ForeignTLSContext(persona: persona)
    }

    private static func identity(_ id: String, name: String, version: Int, port: UInt16? = nil) -> KDEConnectIdentity {
        KDEConnectIdentity(
            deviceID: id, name: name, deviceType: .desktop, protocolVersion: version,
            incomingCapabilities: [KDEConnectShare.packetType], outgoingCapabilities: [KDEConnectShare.packetType],
            tcpPort: port)
    }

    private static func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// Alice dials Bob (heard at `heardVersion`), each with its own certificate; both links or
    /// both failures come back.
    private static func link(
        aliceVersion: Int, bobVersion: Int, aliceCertificateName: String = alice, in directory: TemporaryDirectory
    ) async throws -> (
        dialed: Result<KDEConnectHandshake.Link, any Error>, accepted: Result<KDEConnectHandshake.Link, any Error>
    ) {
        let aliceTLS = try tls(aliceCertificateName, in: directory)
        let bobTLS = try tls(bob, in: directory)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let bobIdentity = identity(bob, name: "Bob", version: bobVersion)
        async let accepted = Self.outcome {
            // The apps' deadlines (and hexd's 2 s and 10 s) are for a LAN; a debug build among hundreds
            // of tests on two cores needs more, on both sides.
            try await KDEConnectHandshake.accept(
                try await listener.accept(), own: bobIdentity, tls: bobTLS, now: 1, within: .seconds(30))
        }
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        let dialed = await Self.outcome {
            try await KDEConnectHandshake.dial(
                socket, own: identity(alice, name: "Alice", version: aliceVersion),
                heard: identity(bob, name: "Bob", version: bobVersion, port: listener.port), tls: aliceTLS, now: 1,
                within: .seconds(30))
        }
        if case .failure = dialed { socket.shutdown() }
        return (dialed, await accepted)
    }

    @Test(arguments: [(7, 7), (8, 7), (7, 8), (8, 8)])
    func bothSidesProveTheirDeviceAtEitherVersion(aliceVersion: Int, bobVersion: Int) async throws {
        let directory = try TemporaryDirectory()
        let (dialed, accepted) = try await Self.link(aliceVersion: aliceVersion, bobVersion: bobVersion, in: directory)
        let aliceSide = try dialed.get()
        let bobSide = try accepted.get()
        #expect(aliceSide.identity.deviceID == Self.bob && bobSide.identity.deviceID == Self.alice)
        let spoken = min(aliceVersion, bobVersion)
        #expect(aliceSide.version == spoken && bobSide.version == spoken)
        #expect(aliceSide.publicKey != bobSide.publicKey && aliceSide.publicKey.count == 91)
        // Packets cross both ways on the link.
        try await aliceSide.lines.writeLine(KDEConnectPair(pair: true).encoded(id: 2).dropLast(), timeout: .seconds(5))
        guard case .line(let line)? = try await bobSide.lines.readLine(timeout: .seconds(5)) else {
            Issue.record("no packet")
            return
        }
        #expect(KDEConnectPair(try KDEConnectPacket.decode(line)) == KDEConnectPair(pair: true))
    }

    @Test func aCertificateThatNamesAnotherDeviceIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let (_, accepted) = try await Self.link(
            aliceVersion: 7, bobVersion: 7, aliceCertificateName: "e7e00000000000000000000000000eee", in: directory)
        guard case .failure(KDEConnectHandshake.Failure.mismatch(let reason)) = accepted else {
            Issue.record("the link was not refused for its certificate: \(accepted)")
            return
        }
        #expect(reason.contains("e7e00000000000000000000000000eee"), "\(reason)")
    }

    /// What a stranger sends before TLS: too long, more than one line, a target that is another
    /// device, nothing at all. Each is refused: silence at the deadline, the others at once.
    private static func firstBytes(_ label: String) -> [UInt8] {
        switch label {
        case "long": return Array(repeating: UInt8(ascii: "a"), count: 9_000)
        case "two lines": return identity(alice, name: "A", version: 7).encoded(id: 1) + Array("{}\n".utf8)
        case "not JSON": return Array("hello\n".utf8)
        case "another target":
            var meant = identity(alice, name: "A", version: 8)
            meant.targetDeviceID = "c0c00000000000000000000000000ccc"
            return meant.encoded(id: 1)
        default: return []
        }
    }

    @Test(arguments: ["long", "two lines", "not JSON", "another target", "silence"])
    func aStrangersFirstBytesAreRefused(_ label: String) async throws {
        let bytes = Self.firstBytes(label)
        let directory = try TemporaryDirectory()
        let bobTLS = try Self.tls(Self.bob, in: directory)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        if !bytes.isEmpty { try await socket.write(bytes, timeout: .seconds(5)) }
        let started = ContinuousClock.now
        let result = await Self.outcome {
            try await KDEConnectHandshake.accept(
                try await listener.accept(), own: Self.identity(Self.bob, name: "Bob", version: 8), tls: bobTLS, now: 1)
        }
        guard case .failure(let error) = result else {
            Issue.record("\(label): a link was made")
            return
        }
        // Silence ends at the deadline, not later: the wait is a deadline, whatever the load.
        #expect(((error as? SocketError)?.isTimeout ?? false) == (label == "silence"), "\(label): \(error)")
        #expect(ContinuousClock.now - started < .seconds(30), "\(label)")
        socket.shutdown()
    }
}
