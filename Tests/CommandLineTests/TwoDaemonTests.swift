import HexCommandLine
import HexControl
import HexKit
import HexStore
import HexTestSupport
import Testing

extension ProcessTests {
    /// Two or three real hexd processes on loopback, each with its own data directory and TCP port,
    /// sharing one discovery port and broadcasting to 127.255.255.255.
    @Suite struct TwoDaemonTests {
        private func peers(of daemon: DaemonProcess) async throws -> [PeerInfo] {
            try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"])
        }

        private func waitForPeer(_ name: String, of daemon: DaemonProcess) async throws {
            try await waitUntil("\(daemon.name) lists \(name)", timeout: .seconds(10)) {
                try await peers(of: daemon).contains { $0.name == name }
            }
        }

        @Test func daemonsDiscoverEachOtherSendAHexAndAcknowledgeIt() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            try await waitForPeer("Bob", of: alice)
            try await waitForPeer("Alice", of: bob)
            let aliceStatus = try await alice.hexctlJSON(StatusReportShape.self, ["status"])
            let bobAsSeen = try #require(try await peers(of: alice).first)
            #expect(
                bobAsSeen.versionID == HexdVersion.current && !bobAsSeen.legacy && bobAsSeen.addresses == ["127.0.0.1"])

            let send = try await alice.hexctl([
                "send", "--to", "bob", "-d", "Trip photos", "--color", "#3498db", "https://example.com/a",
                "https://example.org/b", "--json",
            ])
            #expect(send.status == 0, "\(send.standardError)")
            let report = try ControlCoding.decode(SendReport.self, from: Array(send.standardOutput.utf8))
            #expect(report.status == .stored && report.messageID != nil && report.peer.hasPrefix("Bob ("))

            let inbox = try await bob.hexctlJSONLines(HexSummary.self, ["inbox"])
            let hex = try #require(try await bob.newestInboxHex())
            #expect(inbox.count == 1 && !hex.isChecked)
            #expect(hex.senderName == "Alice" && hex.senderUUID == aliceStatus.peerUUID)
            #expect(hex.hexDescription == "Trip photos" && hex.hexColor == "#3498DB")
            #expect(hex.links.map(\.url) == ["https://example.com/a", "https://example.org/b"])
            #expect(hex.links.map(\.linkDescription) == ["example.com", "example.org"])
            #expect(report.message.contains(hex.id.uuidString.uppercased()), "the Ack names the stored hex")
            #expect(
                report.hexID == hex.id.uuidString.uppercased(), "send --json gives the stored hex's id as its own field"
            )

            // The receiver's events: Alice found, then the hex; a watcher can resume after any of them.
            let events = try await bob.events { $0.contains { $0.kind == .hexReceived } }
            #expect(events.map(\.seq) == events.indices.map { UInt64($0) + 1 }, "sequence numbers count up from 1")
            #expect(events.contains { $0.kind == .peerFound && $0.peer == "Alice" })
            let received = try #require(events.first { $0.kind == .hexReceived })
            #expect(
                received.id == hex.id.uuidString.uppercased() && received.peer == "Alice"
                    && received.message == "Trip photos")
            let resumed = try await bob.events(since: received.seq - 1) { $0.contains { $0.seq >= received.seq } }
            #expect(resumed.first?.seq == received.seq, "the replay starts right after --since")
            // hexctl watch prints the sender's side as a person reads it, and --until ends it.
            let senderEvents = try await alice.hexctl(["watch", "--until", "sendAcked", "--timeout", "20"])
            #expect(senderEvents.status == 0, "\(senderEvents.standardError)")
            let printed = senderEvents.standardOutput
            #expect(printed.contains("sendAcked \"Bob (") && printed.contains("\"stored\""), "\(printed)")

            #expect(try await bob.hexctl(["inbox", "check", String(hex.id.uuidString.prefix(6))]).status == 0)
            #expect(try await bob.hexctlJSON(StatusReportShape.self, ["status"]).unchecked == 0)
        }

        /// `watch --until` with nothing of that kind, not even an event at all: exit 75 at `--timeout`.
        /// Peers are remembered a batch at a time; those seen just before a stop are written as
        /// the daemon stops, so a later start can still name them.
        @Test func aPeerSeenJustBeforeAStopIsRemembered() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            // By status, which reads no remembered peers (a peer list would write those waiting).
            try await waitUntil("Ada hears Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).peers == 1
            }
            #expect(ada.stop() == 0)
            let data = DataDirectory(explicit: ada.dataDirectory, environment: [:])
            let database = try HexDatabase(path: data.databasePath)
            #expect(try database.knownPeers().map(\.name).contains("Grace"))
            withExtendedLifetime(grace) {}
        }

        @Test func watchUntilAKindThatNeverComesEndsAtItsTimeout() async throws {
            let alone = try await DaemonProcess(name: "Alone", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let watch = try await alone.hexctl(["watch", "--until", "hexReceived", "--timeout", "1"])
            #expect(
                watch.status == 75 && watch.standardError.contains("no hexReceived event in time"),
                "\(watch.standardError)")
        }

        @Test func aKilledPeerExpiresAndAStoppedOneSaysGoodbye() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let interval = 0.3
            let watcher = try await DaemonProcess(name: "Watcher", discoveryPort: port, interval: interval)
            let killed = try await DaemonProcess(name: "Killed", discoveryPort: port, interval: interval)
            let stopped = try await DaemonProcess(name: "Stopped", discoveryPort: port, interval: interval)
            try await waitForPeer("Killed", of: watcher)
            try await waitForPeer("Stopped", of: watcher)

            killed.kill()
            // Expiry is after three missed intervals of the peer (0.9 s here); the bound only stops the test.
            try await waitUntil("Killed expires", timeout: .seconds(10)) {
                try await !peers(of: watcher).contains { $0.name == "Killed" }
            }
            #expect(try await peers(of: watcher).map(\.name) == ["Stopped"])

            #expect(stopped.stop() == 0)
            try await waitUntil("Stopped is gone", timeout: .seconds(10)) { try await peers(of: watcher).isEmpty }
            let lost = try await watcher.events { $0.filter { $0.kind == .peerLost }.count == 2 }
                .filter { $0.kind == .peerLost }
            #expect(lost.map(\.peer) == ["Killed", "Stopped"] && lost.map(\.message) == [nil, "said bye"], "\(lost)")
            let text = try await watcher.hexctl(
                ["watch", "--since", String(lost[0].seq - 1), "--until", "peerLost", "--timeout", "20"])
            #expect(text.status == 0 && text.standardOutput.contains("peerLost \"Killed\""), "\(text.standardOutput)")
        }

        @Test func aRestartedPeerIsRecognisedByItsUUID() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let watcher = try await DaemonProcess(name: "Watcher", discoveryPort: port)
            let first = try await DaemonProcess(name: "Phoenix", discoveryPort: port)
            try await waitForPeer("Phoenix", of: watcher)
            let uuid = try #require(try await peers(of: watcher).first?.uuid)
            first.kill()
            // The same data directory again, before the old entry expires: the same peer UUID with a
            // new instance, seen as a restart (a second peerFound), never as a second peer.
            let second = try await DaemonProcess(name: "Phoenix", discoveryPort: port, directory: first.directory)
            _ = try await watcher.events { $0.filter { $0.kind == .peerFound && $0.peer == "Phoenix" }.count == 2 }
            #expect(try await peers(of: watcher).map(\.uuid) == [uuid])
            #expect(try await second.hexctlJSON(StatusReportShape.self, ["status"]).peerUUID == uuid)
        }
    }
}
