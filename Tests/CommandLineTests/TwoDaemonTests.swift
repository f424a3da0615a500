import HexControl
import HexKit
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
            try await waitUntil("\(daemon.name) lists \(name)", timeout: .seconds(10)) { try await peers(of: daemon).contains { $0.name == name } }
        }

        @Test func daemonsDiscoverEachOtherSendAHexAndAcknowledgeIt() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            try await waitForPeer("Bob", of: alice)
            try await waitForPeer("Alice", of: bob)
            let aliceStatus = try await alice.hexctlJSON(StatusReportShape.self, ["status"])
            let bobAsSeen = try #require(try await peers(of: alice).first)
            #expect(bobAsSeen.versionID == HexdVersion.current && !bobAsSeen.legacy && bobAsSeen.addresses == ["127.0.0.1"])

            let send = try await alice.hexctl(["send", "--to", "bob", "-d", "Trip photos", "--color", "#3498db", "https://example.com/a", "https://example.org/b", "--json"])
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
            #expect(report.hexID == hex.id.uuidString.uppercased(), "send --json gives the stored hex's id as its own field")

            // The receiver's events: Alice found, then the hex; a watcher can resume after any of them.
            let watch = try await bob.hexctl(["watch", "--json"], timeout: .seconds(2))
            let events = try watch.standardOutput.split(separator: "\n").map { try ControlCoding.decode(DaemonEvent.self, from: Array($0.utf8)) }
            #expect(events.map(\.seq) == Array(1...UInt64(events.count)))
            #expect(events.contains { $0.kind == .peerFound && $0.peer == "Alice" })
            let received = try #require(events.first { $0.kind == .hexReceived })
            #expect(received.id == hex.id.uuidString.uppercased() && received.peer == "Alice" && received.message == "Trip photos")
            let resumed = try await bob.hexctl(["watch", "--json", "--since", String(received.seq - 1)], timeout: .seconds(1))
            #expect(resumed.standardOutput.split(separator: "\n").count == events.count - Int(received.seq) + 1)
            let senderEvents = try await alice.hexctl(["watch"], timeout: .seconds(1)).standardOutput
            #expect(senderEvents.contains("sendAcked \"Bob (") && senderEvents.contains("\"stored\""))

            #expect(try await bob.hexctl(["inbox", "check", String(hex.id.uuidString.prefix(6))]).status == 0)
            #expect(try await bob.hexctlJSON(StatusReportShape.self, ["status"]).unchecked == 0)
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
            try await waitUntil("Killed expires", timeout: .seconds(10)) { try await !peers(of: watcher).contains { $0.name == "Killed" } }
            #expect(try await peers(of: watcher).map(\.name) == ["Stopped"])

            #expect(stopped.stop() == 0)
            try await waitUntil("Stopped is gone", timeout: .seconds(10)) { try await peers(of: watcher).isEmpty }
            let events = try await watcher.hexctl(["watch"], timeout: .seconds(1)).standardOutput
            #expect(events.contains("peerLost \"Killed\"") && events.contains("peerLost \"Stopped\" version \"\(HexdVersion.current)\" \"said bye\""))
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
            try await waitUntil("the restart is seen", timeout: .seconds(10)) {
                try await watcher.hexctl(["watch"], timeout: .milliseconds(500)).standardOutput.components(separatedBy: "peerFound \"Phoenix\"").count == 3
            }
            #expect(try await peers(of: watcher).map(\.uuid) == [uuid])
            #expect(try await second.hexctlJSON(StatusReportShape.self, ["status"]).peerUUID == uuid)
        }
    }
}
