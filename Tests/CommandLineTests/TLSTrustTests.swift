import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import Synchronization
import Testing

extension ProcessTests {
    /// Current peers talk TLS 1.3, each proving its key: real daemons, real handshakes.
    @Suite struct TLSTrustTests {
        private func waitForPeer(_ name: String, of daemon: DaemonProcess) async throws {
            try await waitUntil("\(daemon.name) lists \(name)", timeout: .seconds(10)) {
                try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == name }
            }
        }

        /// The bytes between two daemons, captured by a relay, are TLS and hold no link in clear;
        /// the send reports the key the receiver proved.
        @Test func theWireBetweenCurrentPeersHoldsNoLinkInClear() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            let bobStatus = try await bob.hexctlJSON(StatusReport.self, ["status"])
            let bobKey = try #require(bobStatus.fingerprint)
            let relay = try RecordingRelay(to: bobStatus.tcpPort)

            let secret = "https://cloud.example/s/private-budget-2027.xlsx"
            let result = try await alice.hexctl([
                "send", "--to", "127.0.0.1:\(relay.port)", "-d", "budget", secret, "--json",
            ])
            #expect(result.status == 0, "\(result.standardError)")
            let report = try ControlCoding.decode(SendReport.self, from: Array(result.standardOutput.utf8))
            #expect(report.status == .stored && report.peerKey == bobKey, "the receiver proved its key")
            #expect(try await bob.newestInboxHex()?.links.map(\.url) == [secret])

            let (upstream, downstream) = relay.captured
            #expect(upstream.first == 0x16, "the sender began a TLS handshake")
            for bytes in [upstream, downstream] {
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(
                    !text.contains("cloud.example") && !text.contains("budget") && !text.contains("Store"),
                    "nothing in clear")
            }

            // By name: the key Bob announced is the key proven.
            try await waitForPeer("Bob", of: alice)
            let named = try await alice.hexctlJSON(SendReport.self, ["send", "--to", "bob", "https://example.com/x"])
            #expect(named.peerKey == bobKey)
            relay.stop()
        }

        /// Once Alice has sent to Bob, only Alice's key speaks for Alice's UUID there: another key
        /// over TLS, or plaintext, claiming it is answered Ack `rejected` and stores nothing; the
        /// genuine hex is marked `new` (its key met for the first time).
        @Test func aForgedSenderIsRejectedOverTLSAndOverPlaintext() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            let aliceUUID = try await alice.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            let bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            #expect(
                try await alice.hexctl(["send", "--to", "127.0.0.1:\(bobPort)", "https://example.com/genuine"]).status
                    == 0)
            #expect(try await bob.newestInboxHex()?.senderTrust == .new)

            let forged = Envelope.store(
                HexJM(
                    senderUUID: aliceUUID, senderName: "Alice", hexDescription: "forged", hexColor: "#FF0000",
                    links: [LinkJM(url: "https://evil.example/phish")]), versionID: HexdVersion.current,
                messageID: "FORGED-1")
            let directory = try TemporaryDirectory()
            let (evil, _) = try TLSIdentity.loadOrCreate(
                keyPath: directory.file("evil.key"), certificatePath: directory.file("evil.crt"), commonName: "evil")
            for overTLS in [true, false] {
                let (_, connection) = try await peerConnection(to: bobPort, as: overTLS ? evil : nil)
                try await connection.writeLine(forged.encodedLine(), timeout: .seconds(5))
                guard case .line(let line)? = try await connection.readLine(timeout: .seconds(5)) else {
                    throw TLSError("read the Ack", reason: "none came")
                }
                let ack = try Envelope.decode(from: line)
                #expect(ack.status == .rejected && ack.messageID == "FORGED-1", "over TLS: \(overTLS)")
                #expect(ack.message?.contains(aliceUUID) == true, "the reason names the peer: \(ack.message ?? "")")
            }
            #expect(
                try await bob.hexctlJSONLines(HexSummary.self, ["inbox"]).map(\.hexDescription) == [""],
                "only the genuine hex")
        }

        /// With `--plaintext refuse` a daemon neither hears nor sends plaintext, and still talks
        /// TLS with current peers.
        @Test func plaintextRefusedMeansTLSOnlyBothWays() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let strict = try await DaemonProcess(
                name: "Strict", discoveryPort: port, extraArguments: ["--plaintext", "refuse"])
            let other = try await DaemonProcess(name: "Other", discoveryPort: port)
            let strictPort = try await strict.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let otherPort = try await other.hexctlJSON(StatusReport.self, ["status"]).tcpPort

            let socket = try await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: strictPort), timeout: .seconds(5))
            let connection = StreamConnection(socket: socket, maximumLineLength: 1 << 20)
            let legacyStore =
                #"{"versionID":"1.0","operationType":"Store","jmObjectType":"Hex","#
                + #""jmObject":{"senderName":"Old","links":[{"url":"https://old.example"}]}}"#
            try await connection.writeLine(Array(legacyStore.utf8), timeout: .seconds(5))
            guard case .line(let line)? = try await connection.readLine(timeout: .seconds(5)) else {
                throw TLSError("read the Ack", reason: "none came")
            }
            let ack = try Envelope.decode(from: line)
            #expect(ack.status == .rejected && ack.message?.contains("TLS only") == true)
            #expect(try await strict.hexctlJSONLines(HexSummary.self, ["inbox"]).isEmpty)

            let legacySend = try await strict.hexctl([
                "send", "--to", "127.0.0.1:\(otherPort)", "--legacy", "https://example.com/x",
            ])
            #expect(
                legacySend.status == 77 && legacySend.standardError.contains("refuses plaintext"),
                "\(legacySend.standardError)")
            let tlsSend = try await strict.hexctl(["send", "--to", "127.0.0.1:\(otherPort)", "https://example.com/y"])
            #expect(tlsSend.status == 0, "\(tlsSend.standardError)")
            #expect(
                try await PackageExecutable.run(
                    "hexd", ["--legacy", "--plaintext", "refuse", "--data-dir", strict.dataDirectory + "-x"]
                ).status == 64)
        }

        /// `--accept known` on real daemons with real keys: a peer whose key was pinned before is
        /// served, a stranger's hexes and alerts are refused and its key is not pinned.
        @Test func acceptKnownTakesPinnedKeysAndRefusesStrangers() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            var grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            try await waitForPeer("Grace", of: ada)
            let first = try await ada.hexctl(["send", "--to", "Grace", "https://example.com/before"])
            #expect(first.status == 0, "pins Ada's key: \(first.standardError)")
            #expect(grace.stop() == 0)
            grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port, directory: grace.directory,
                extraArguments: ["--accept", "known"])
            #expect(try await grace.hexctlJSON(StatusReport.self, ["status"]).accept == "known")
            let eve = try await DaemonProcess(name: "Eve", discoveryPort: port)
            try await waitForPeer("Grace", of: eve)
            try await waitForPeer("Grace", of: ada)

            let known = try await ada.hexctl(["send", "--to", "Grace", "https://example.com/known"])
            #expect(known.status == 0, "\(known.standardError)")
            let strangers = [
                ["send", "--to", "Grace", "https://example.com/stranger"],
                ["alert", "--to", "Grace", "hello"],
            ]
            for command in strangers {
                let refused = try await eve.hexctl(command + ["--no-queue"])
                #expect(
                    refused.status == 77 && refused.standardError.contains("Grace accepts hexes only from"),
                    "\(command): \(refused.standardError)")
            }
            let inbox = try await grace.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(
                inbox.map(\.senderName) == ["Ada", "Ada"] && inbox.map(\.senderTrust) == [.pinned, .new],
                "the first hex met Ada's key, the second was known by it")
            let eveUUID = try await eve.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            let eveAsSeen = try await grace.hexctlJSONLines(PeerInfo.self, ["peers"]).first { $0.uuid == eveUUID }
            #expect(eveAsSeen != nil && eveAsSeen?.trust == nil, "the stranger's key was not pinned")
        }

        /// Two real daemons: sends share one kept TLS connection; once the receiver closes it (its
        /// idle timeout, 1 s here, is shorter than the 15 s a sender keeps it), the next send goes on
        /// a new one, and every hex is stored once.
        @Test func aKeptConnectionTheReceiverClosedIsReplaced() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--idle-timeout", "1"])
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            try await waitForPeer("Grace", of: ada)
            let handshakes = { grace.log.components(separatedBy: "TLS connection from").count - 1 }
            for index in 0..<3 {
                let send = try await ada.hexctl(["send", "--to", "Grace", "https://example.com/kept/\(index)"])
                #expect(send.status == 0, "\(send.standardError)")
            }
            #expect(handshakes() == 1, "three sends, one connection kept between them")
            try await waitUntil("Grace closes the idle connection", timeout: .seconds(20)) {
                grace.log.contains("no line within the deadline")
            }
            let after = try await ada.hexctl(["send", "--to", "Grace", "https://example.com/after-close"])
            #expect(after.status == 0, "\(after.standardError)")
            #expect(handshakes() == 2, "the closed one was replaced by a new connection")
            let stored = try await grace.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(stored.count == 4, "each hex stored once")
        }
    }
}

/// Relays one TCP connection to 127.0.0.1:`port` and keeps every byte that crosses it.
final class RecordingRelay: Sendable {
    private final class Capture: Sendable {
        let bytes = Mutex<(up: [UInt8], down: [UInt8])>(([], []))
    }

    private let listener: StreamListener
    private let capture = Capture()
    private let task: Task<Void, Never>

    var port: UInt16 { listener.port }
    /// What the client sent, and what the server answered.
    var captured: (up: [UInt8], down: [UInt8]) { capture.bytes.withLock { $0 } }

    init(to port: UInt16) throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        self.listener = listener
        let capture = capture
        task = Task {
            guard let client = try? await listener.accept(),
                let server = try? await StreamConnector.tcp(
                    to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
            else { return }
            async let up: Void = Self.copy(from: client, to: server) { chunk in
                capture.bytes.withLock { $0.up += chunk }
            }
            async let down: Void = Self.copy(from: server, to: client) { chunk in
                capture.bytes.withLock { $0.down += chunk }
            }
            _ = await (up, down)
        }
    }

    func stop() { task.cancel() }

    private static func copy(from source: Socket, to destination: Socket, record: @Sendable ([UInt8]) -> Void) async {
        while true {
            var chunk: [UInt8] = []
            guard
                let count = try? await source.read(maximumCount: 65_536, timeout: .seconds(30), { chunk = Array($0) }),
                count > 0
            else {
                destination.shutdownWrite()
                return
            }
            record(chunk)
            guard (try? await destination.write(chunk, timeout: .seconds(30))) != nil else { return }
        }
    }
}

/// A TLS server with a key of its own: it completes handshakes and counts what arrives after.
final class AttackingServer: Sendable {
    private final class Counts: Sendable {
        let value = Mutex<(handshakes: Int, bytes: Int)>((0, 0))
    }

    private let listener: StreamListener
    let key: Fingerprint
    private let counts = Counts()
    private let task: Task<Void, Never>

    var port: UInt16 { listener.port }
    var handshakes: Int { counts.value.withLock { $0.handshakes } }
    var bytesAfterHandshake: Int { counts.value.withLock { $0.bytes } }

    init(directory: TemporaryDirectory) throws {
        let (identity, _) = try TLSIdentity.loadOrCreate(
            keyPath: directory.file("evil.key"), certificatePath: directory.file("evil.crt"), commonName: "evil")
        let context = try TLSContext(identity: identity)
        let listener = try StreamListener.tcp(address: try #require(IPAddress("127.0.0.66")), port: 0)
        self.listener = listener
        key = identity.fingerprint
        let counts = counts
        task = Task {
            while let socket = try? await listener.accept() {
                guard
                    let stream = try? await TLSStream.handshake(
                        over: socket, context: context, as: .server, timeout: .seconds(5))
                else { continue }
                counts.value.withLock { $0.handshakes += 1 }
                while let count = try? await stream.read(maximumCount: 65_536, timeout: .seconds(2), { _ in }),
                    count > 0
                {
                    counts.value.withLock { $0.bytes += count }
                }
            }
        }
    }

    deinit { task.cancel() }
}
