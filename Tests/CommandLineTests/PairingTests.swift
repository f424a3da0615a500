import Foundation
import HexCommandLine
import HexControl
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// Pairing, `--accept paired`, unpairing, and trust reset for a reinstalled peer: real
    /// daemons, real TLS, real key files.
    @Suite struct PairingTests {
        private func peer(_ name: String, of daemon: DaemonProcess) async throws -> PeerInfo? {
            try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"]).first { $0.name == name }
        }

        private func waitForPeer(
            _ name: String, of daemon: DaemonProcess, where condition: @escaping (PeerInfo) -> Bool = { _ in true }
        ) async throws {
            try await waitUntil("\(daemon.name) lists \(name)", timeout: .seconds(10)) {
                try await peer(name, of: daemon).map(condition) ?? false
            }
        }

        /// Bob takes hexes only from paired peers. Alice's send is refused; Alice asks to pair,
        /// both sides show the same code (Bob in `peers` and in a `watch` event), Bob accepts, and
        /// Alice's hex is then stored, marked `paired`. Unpairing leaves the key pinned.
        @Test func twoUsersPairByComparingTheCodeAndThenPairedOnlyLetsThemIn() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port, extraArguments: ["--accept", "paired"])
            let aliceStatus = try await alice.hexctlJSON(StatusReport.self, ["status"])
            let bobStatus = try await bob.hexctlJSON(StatusReport.self, ["status"])
            #expect(bobStatus.accept == "paired")
            try await waitForPeer("Bob", of: alice)
            try await waitForPeer("Alice", of: bob)

            let refused = try await alice.hexctl(["send", "--to", "bob", "https://example.com/before"])
            #expect(
                refused.status == 77 && refused.standardError.contains("only from paired peers"),
                "\(refused.standardError)")

            let watcher = try ControlClient(
                socketPath: DataDirectory(explicit: bob.dataDirectory, environment: [:]).socketPath)
            _ = try await watcher.request(.watch(since: 0), timeout: .seconds(5))

            let asked = try await alice.hexctlJSON(TrustReport.self, ["pair", "bob"])
            let code = try #require(asked.code)
            #expect(
                code.count == 8 && asked.awaitingPeer == true && asked.key == bobStatus.fingerprint
                    && asked.peerUUID == bobStatus.peerUUID)
            #expect(
                try await peer("Alice", of: bob)?.pairing == PairingStatus(code: code, awaitingUs: true),
                "Bob's user sees the same code")
            #expect(try await peer("Bob", of: alice)?.pairing == PairingStatus(code: code, awaitingUs: false))
            var event = try await watcher.nextResponse(timeout: .seconds(5)).event
            while let seen = event, seen.kind != .pairRequested {
                event = try await watcher.nextResponse(timeout: .seconds(5)).event
            }
            #expect(event?.message == code && event?.peerUUID == aliceStatus.peerUUID)
            let text = try await bob.hexctl(["peers"])
            #expect(
                text.standardOutput.contains("hexctl pair --accept \(aliceStatus.peerUUID)")
                    && text.standardOutput.contains(code))

            let accepted = try await bob.hexctlJSON(TrustReport.self, ["pair", "--accept", "alice"])
            #expect(accepted.trust == .paired && accepted.code == code && accepted.key == aliceStatus.fingerprint)
            let aliceAtBob = try await peer("Alice", of: bob)
            #expect(aliceAtBob?.trust == .paired && aliceAtBob?.pairing == nil)
            #expect(try await peer("Bob", of: alice)?.trust == .paired, "the initiator is paired too")

            #expect(try await alice.hexctl(["send", "--to", "bob", "https://example.com/after"]).status == 0)
            #expect(try await bob.newestInboxHex()?.senderTrust == .paired)

            let again = try await bob.hexctl(["pair", "--accept", "alice"])
            #expect(
                again.status == 1 && again.standardError.contains("no pairing request"),
                "the request was used up: \(again.status) \(again.standardError)")
            #expect(try await bob.hexctlJSON(TrustReport.self, ["unpair", "alice"]).trust == .pinned)
            let refusedAgain = try await alice.hexctl(["send", "--to", "bob", "https://example.com/unpaired"])
            #expect(refusedAgain.status == 77, "unpaired is not paired: \(refusedAgain.standardError)")
        }

        /// Pairing is asked over TLS, by a peer: plaintext has no key to pair, and there is nothing
        /// to accept until a peer asked, so accepting then pins nothing.
        @Test func pairingNeedsARequestOverTLS() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            try await waitForPeer("Alice", of: bob)
            try await waitForPeer("Bob", of: alice)
            let bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let plaintext = Envelope.pair(
                PairJM(
                    step: .request, senderUUID: UUID().uuidString, senderName: "Eve",
                    commitment: String(repeating: "ab", count: 32)),
                versionID: HexdVersion.current, messageID: "PAIR-1")
            let raw = try await alice.hexctl(
                ["raw", "127.0.0.1:\(bobPort)", "-"], input: Data(plaintext.encodedLine()))
            #expect(
                raw.standardOutput.contains(#""status":"rejected""#)
                    && raw.standardOutput.contains("pairing needs TLS"), "\(raw.standardOutput)")
            let none = try await bob.hexctl(["pair", "--accept", "alice"])
            #expect(
                none.status == 1 && none.standardError.contains("no pairing request"),
                "\(none.status) \(none.standardError)")
            #expect(try await peer("Alice", of: bob)?.trust == nil, "nothing pinned")
        }

        /// The key files are private; a restart keeps the identity; a reinstalled peer (a new key)
        /// is a new device: a new ID, never taken for the old one, flagged as sharing its name
        /// with the pinned key, and a send to the old ID says what to do.
        @Test func aReinstalledPeerIsANewDeviceFlaggedByItsName() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let alicePort = try await alice.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            var bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            let bobDirectory = DataDirectory(explicit: bob.dataDirectory, environment: [:])
            for path in [bobDirectory.keyPath, bobDirectory.certificatePath] {
                let mode = try #require(
                    try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
                #expect(mode == 0o600, "\(path) is mode \(String(mode, radix: 8))")
            }
            let firstKey = try await bob.hexctlJSON(StatusReport.self, ["status"]).fingerprint
            let bobUUID = try await bob.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            #expect(
                try await bob.hexctl(["send", "--to", "127.0.0.1:\(alicePort)", "https://example.com/first"]).status
                    == 0)

            #expect(bob.stop() == 0)
            bob = try await DaemonProcess(name: "Bob", discoveryPort: port, directory: bob.directory)
            let restarted = try await bob.hexctlJSON(StatusReport.self, ["status"])
            #expect(restarted.fingerprint == firstKey && restarted.peerUUID == bobUUID, "a restart keeps the identity")
            #expect(
                try await bob.hexctl(["send", "--to", "127.0.0.1:\(alicePort)", "https://example.com/restarted"]).status
                    == 0)

            #expect(bob.stop() == 0)
            try FileManager.default.removeItem(atPath: bobDirectory.keyPath)
            try FileManager.default.removeItem(atPath: bobDirectory.certificatePath)
            bob = try await DaemonProcess(name: "Bob", discoveryPort: port, directory: bob.directory)
            let reinstalled = try await bob.hexctlJSON(StatusReport.self, ["status"])
            let newKey = try #require(reinstalled.fingerprint)
            #expect(
                newKey != firstKey && reinstalled.peerUUID != bobUUID && reinstalled.peerUUID.isKeyDerivedID,
                "a new key is a new ID")

            #expect(
                try await bob.hexctl([
                    "send", "--to", "127.0.0.1:\(alicePort)",
                    "https://example.com/reinstalled",
                ]).status == 0)
            #expect(
                try await alice.newestInboxHex()?.senderUUID == reinstalled.peerUUID,
                "never filed under the old ID")
            #expect(try await alice.newestInboxHex()?.senderTrust == .new)
            try await waitForPeer("Bob", of: alice) { $0.uuid == reinstalled.peerUUID && $0.namesakes == [bobUUID] }
            let listed = try await alice.hexctl(["peers"]).standardOutput
            #expect(listed.contains("is not the \"Bob\" whose key is pinned here as \(bobUUID)"), "\(listed)")

            let toOld = try await alice.hexctl([
                "send", "--to", bobUUID, "--no-queue",
                "https://example.com/to-the-old-id",
            ])
            #expect(
                toOld.status != 0 && toOld.standardError.contains(reinstalled.peerUUID)
                    && toOld.standardError.contains("hexctl trust --reset \(bobUUID)"), "\(toOld.standardError)")

            // The old ID's key is forgotten; the namesake warning goes with it.
            let reset = try await alice.hexctlJSON(TrustReport.self, ["trust", "--reset", bobUUID])
            #expect(reset.trust == nil && reset.key == nil && reset.peerUUID == bobUUID)
            #expect(try await alice.hexctl(["trust", "--reset", bobUUID]).status == 1, "nothing left to reset")
            try await waitForPeer("Bob", of: alice) { $0.uuid == reinstalled.peerUUID && $0.namesakes == nil }
        }
    }
}
