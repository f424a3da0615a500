import Foundation
import HexControl
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// Alerts are kept (issue 20, item 3): listed by `hexctl alerts` after a restart, counted
    /// against their sender's share of the inbox like hexes, deleted to give it back; and a hex
    /// shown is a hex seen.
    @Suite struct KeptAlertTests {
        @Test func alertsAreKeptListedAndCountedLikeHexes() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let arguments = ["--sender-budget", "2KiB"]
            var bob = try await DaemonProcess(name: "Bob", discoveryPort: port, extraArguments: arguments)
            var bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let aliceID = try await alice.hexctlJSON(StatusReport.self, ["status"]).peerUUID

            let overTLS = try await alice.hexctl([
                "alert", "--no-queue", "--to", "127.0.0.1:\(bobPort)",
                "lunch", "at", "one",
            ])
            #expect(overTLS.status == 0, "\(overTLS.standardError)")
            let plaintext = try await exchange(
                [
                    .alert(
                        "from nowhere", versionID: HexdVersion.current,
                        messageID: UUID().uuidString)
                ],
                port: bobPort, as: nil, from: IPAddress("127.0.0.2"))
            #expect(plaintext.map(\.status) == [.received])

            bob = try await restart(bob, arguments: arguments)
            bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let kept = try await bob.hexctlJSONLines(ReceivedAlert.self, ["alerts"])
            #expect(kept.map(\.message) == ["from nowhere", "lunch at one"], "newest first, after a restart")
            #expect(kept.map(\.senderID) == [nil, aliceID] && kept.first?.address == "127.0.0.2")
            let text = try await bob.hexctl(["alerts"]).standardOutput
            #expect(text.contains("from 127.0.0.2 (plaintext: no proven sender): \"from nowhere\""), "\(text)")
            #expect(text.contains("from \(aliceID.prefix(8))"), "\(text)")

            // One address's share of the inbox holds alerts as it holds hexes.
            let long = String(repeating: "a", count: 700)
            let flood = try await exchange(
                (0..<3).map { _ in
                    .alert(long, versionID: HexdVersion.current, messageID: UUID().uuidString)
                }, port: bobPort, as: nil, from: IPAddress("127.0.0.3"))
            #expect(flood.map(\.status) == [.received, .received, .rejected])
            #expect(flood.last?.message?.contains("--sender-budget") == true, "\(flood.last?.message ?? "")")
            let newest = try await bob.hexctlJSONLines(ReceivedAlert.self, ["alerts", "--limit", "1"])
            let third = try #require(newest.first)
            #expect(try await bob.hexctl(["alerts", "delete", String(third.id.uppercaseText.prefix(8))]).status == 0)
            let again = try await exchange(
                [.alert(long, versionID: HexdVersion.current, messageID: UUID().uuidString)],
                port: bobPort, as: nil, from: IPAddress("127.0.0.3"))
            #expect(again.map(\.status) == [.received], "a delete gave the share back")
            let missing = try await bob.hexctl(["alerts", "delete", "FFFFFFFF"])
            #expect(
                missing.status != 0 && missing.standardError.contains("no alert FFFFFFFF"),
                "\(missing.standardError)")

            // A hex shown is a hex seen.
            #expect(
                try await alice.hexctl([
                    "send", "--no-queue", "--to", "127.0.0.1:\(bobPort)",
                    "https://seen.example",
                ]).status == 0)
            let hex = try #require(try await bob.hexctlJSONLines(HexSummary.self, ["inbox"]).first)
            #expect(!hex.isChecked)
            #expect(try await bob.hexctl(["inbox", "show", hex.id.uuidString]).status == 0)
            #expect(try await bob.hexctlJSONLines(HexSummary.self, ["inbox"]).first?.isChecked == true)
        }

        private func restart(_ daemon: DaemonProcess, arguments: [String]) async throws -> DaemonProcess {
            #expect(daemon.stop() == 0)
            return try await DaemonProcess(
                name: daemon.name, discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                directory: daemon.directory, extraArguments: arguments)
        }
    }
}
