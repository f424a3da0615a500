import Foundation
import HexCommandLine
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import Testing

extension ProcessTests {
    /// The inbox's budgets and the disk's floors (issue 19, items 3 and 4), against real daemons:
    /// strangers over TLS and plaintext from several 127.x addresses, a peer paired by its user.
    @Suite struct StorageBudgetTests {
        /// A hex of about 4.3 KiB as the budgets count it (`Hex.storedBytes`).
        private static func store(
            from sender: String, _ description: String, id: String = UUID().uuidString
        ) -> Envelope {
            .store(
                HexJM(
                    senderUUID: sender, senderName: "Stranger", hexDescription: description, hexColor: "#FF0000",
                    links: [LinkJM(url: "https://big.example/" + String(repeating: "x", count: 3_800))]),
                versionID: HexdVersion.current, messageID: id)
        }

        /// Alice and Bob pair through their users, as `hexctl pair` does it.
        static func pair(_ alice: DaemonProcess, with bob: DaemonProcess) async throws {
            for (daemon, other) in [(alice, "Bob"), (bob, "Alice")] {
                try await waitUntil("\(daemon.name) lists \(other)", timeout: .seconds(10)) {
                    try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == other }
                }
            }
            _ = try await alice.hexctlJSON(TrustReport.self, ["pair", "bob"])
            #expect(try await bob.hexctlJSON(TrustReport.self, ["pair", "--accept", "alice"]).trust == .paired)
        }

        private static let withoutFloors = ["--min-free", "0", "--min-free-hard", "0", "--disk-reserve", "0"]

        /// Each stranger (a key over TLS, an address over plaintext whatever UUIDs it claims)
        /// keeps at most its share, all of them together at most theirs; a paired peer is held
        /// to the inbox's budget alone. A refusal says which budget, a repeat of a stored hex is
        /// still a delivery, a delete gives room back, and what is held is read again at restart.
        @Test func strangersAreHeldToTheirSharesAndAPairedPeerIsNot() async throws {
            let keys = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let budgets = ["--sender-budget", "16KiB", "--strangers-budget", "28KiB", "--inbox-budget", "1MiB"]
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            var bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port,
                extraArguments: budgets + Self.withoutFloors)
            let bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let stranger = try peerIdentity("Stranger", in: keys)
            let strangerID = stranger.deviceID.uppercaseText

            let overTLS = try await exchange(
                (1...5).map { Self.store(from: strangerID, "tls \($0)") },
                port: bobPort, as: stranger)
            #expect(overTLS.map(\.status) == [.stored, .stored, .stored, .rejected, .rejected])
            #expect(overTLS[3].message?.contains("--sender-budget 16.0 KiB") == true, "\(overTLS[3].message ?? "")")
            let repeated = try await exchange(
                [Self.store(from: strangerID, "tls 1", id: overTLS[0].messageID ?? "")],
                port: bobPort, as: stranger)
            #expect(
                repeated.map(\.status) == [.duplicate],
                "a repeat of a stored hex is a delivery, over budget or not")

            // Plaintext from one address, a new UUID each time: one share all the same.
            let plaintext = try await exchange(
                (1...4).map { Self.store(from: UUID().uuidString, "plain \($0)") },
                port: bobPort, as: nil, from: IPAddress("127.0.0.2"))
            #expect(plaintext.map(\.status) == [.stored, .stored, .stored, .rejected])
            // Another address has a share of its own, but strangers together are at their budget.
            let third = try await exchange(
                [Self.store(from: UUID().uuidString, "third")], port: bobPort, as: nil,
                from: IPAddress("127.0.0.3"))
            #expect(
                third.first?.status == .rejected && third.first?.message?.contains("--strangers-budget") == true,
                "\(third.first?.message ?? "")")

            try await Self.pair(alice, with: bob)
            let large = try await alice.hexctl(
                ["send", "--no-queue", "--to", "bob"]
                    + (1...12).map { "https://paired.example/\($0)/" + String(repeating: "p", count: 4_000) })
            #expect(large.status == 0, "a paired peer is held to the inbox's budget alone: \(large.standardError)")

            let storage = try #require(try await bob.hexctlJSON(StatusReport.self, ["status"]).storage)
            #expect(storage.strangersBytes <= 28 << 10 && storage.strangersBytes > 24 << 10)
            #expect(storage.inboxBytes > storage.strangersBytes + 48 << 10, "Alice's hex counts in the inbox")
            #expect(storage.senderBudget == 16 << 10 && storage.strangersBudget == 28 << 10)
            #expect(
                storage.largestSender?.hasPrefix("key \(strangerID.prefix(8))") == true
                    || storage.largestSender == "address 127.0.0.2", "\(storage.largestSender ?? "none")")
            let text = try await bob.hexctl(["status"]).standardOutput
            #expect(
                text.contains("senders not paired: \(ByteCount.text(storage.strangersBytes)) of 28.0 KiB"),
                "\(text)")
            let logged = "refused what key \(strangerID.prefix(8)) sent (a hex or an alert), past --sender-budget"
            #expect(bob.log.contains(logged))

            // A hex deleted gives its sender's share back.
            let first = try #require(overTLS[0].hexID)
            #expect(try await bob.hexctl(["inbox", "delete", first]).status == 0)
            let after = try await exchange(
                [Self.store(from: strangerID, "after a delete")], port: bobPort,
                as: stranger)
            #expect(after.map(\.status) == [.stored])

            // What is held is read again at a restart.
            let before = try await bob.hexctlJSON(StatusReport.self, ["status"]).storage
            #expect(bob.stop() == 0)
            bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port, directory: bob.directory,
                extraArguments: budgets + Self.withoutFloors)
            let restarted = try await bob.hexctlJSON(StatusReport.self, ["status"]).storage
            #expect(restarted?.inboxBytes == before?.inboxBytes && restarted?.strangersBytes == before?.strangersBytes)
            let refusedAgain = try await exchange(
                [Self.store(from: strangerID, "again")],
                port: try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort,
                as: stranger)
            #expect(refusedAgain.map(\.status) == [.rejected])
        }

        /// Below `--min-free`, only paired senders are stored; below `--min-free-hard`, nothing.
        /// Both answer `failed` (try again later) and say which floor, `status` says whom the disk
        /// refuses, and the log says it once. The floors are set above what any disk has free.
        @Test func belowTheFloorsOnlyPairedPeersAndThenNobodyAreStored() async throws {
            let keys = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            var bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port,
                extraArguments: ["--min-free", "100%", "--min-free-hard", "0"])
            try await Self.pair(alice, with: bob)
            let stranger = try peerIdentity("Stranger", in: keys)
            let status = try await bob.hexctlJSON(StatusReport.self, ["status"])
            let refused = try await exchange(
                [Self.store(from: stranger.deviceID.uppercaseText, "stranger")],
                port: status.tcpPort, as: stranger)
            #expect(
                refused.first?.status == .failed && refused.first?.message?.contains("--min-free") == true,
                "\(refused.first?.message ?? "")")
            #expect(
                try await alice.hexctl(["send", "--no-queue", "--to", "bob", "https://paired.example"]).status == 0)
            #expect(try await bob.hexctlJSON(StatusReport.self, ["status"]).storage?.refusing == "senders not paired")
            #expect(bob.log.contains("refusing senders not paired until space returns"))

            #expect(bob.stop() == 0)
            bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port, directory: bob.directory,
                extraArguments: ["--min-free-hard", "100%"])
            try await waitUntil("Alice lists Bob again", timeout: .seconds(10)) {
                try await alice.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Bob" }
            }
            let paired = try await alice.hexctl(["send", "--no-queue", "--to", "bob", "https://paired.example/2"])
            #expect(paired.status == 75 && paired.standardError.contains("--min-free-hard"), "\(paired.standardError)")
            #expect(try await bob.hexctlJSON(StatusReport.self, ["status"]).storage?.refusing == "every Store")
            #expect(try await bob.hexctlJSONLines(HexSummary.self, ["inbox"]).count == 1, "the inbox is served")
        }

        /// A hex of about 470 KiB: eight links of 60,000 bytes.
        private static func largeStore(from sender: String) -> Envelope {
            .store(
                HexJM(
                    senderUUID: sender, senderName: "Flood", hexDescription: "large", hexColor: "#000000",
                    links: (0..<8).map {
                        LinkJM(url: "https://flood.example/\($0)/" + String(repeating: "f", count: 60_000))
                    }),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
        }

        /// Four strangers (two keys over TLS, two plaintext addresses) stream large Stores at a
        /// daemon whose data directory is on a 64 MiB tmpfs, for at most 3 s each: the directory
        /// stays within the strangers' budget (twice over for the write-ahead log, plus the
        /// reserve), a paired peer's hexes are acked throughout, and after the attack the daemon
        /// restarts, lists its inbox and takes the paired peer's hexes again.
        @Test func strangersStreamingLargeStoresCannotFillTheDisk() async throws {
            let disk = try SmallDisk(mebibytes: 64)
            let keys = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let settings = [
                "--sender-budget", "2MiB", "--strangers-budget", "6MiB", "--min-free", "12MiB",
                "--min-free-hard", "4MiB", "--disk-reserve", "2MiB",
            ]
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            var bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port, directory: disk.directory,
                extraArguments: settings)
            try await Self.pair(alice, with: bob)
            let bobPort = try await bob.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let strangers: [(TLSIdentity?, IPAddress?)] = [
                (try peerIdentity("One", in: keys), nil), (try peerIdentity("Two", in: keys), nil),
                (nil, IPAddress("127.0.0.4")), (nil, IPAddress("127.0.0.5")),
            ]
            let deadline = ContinuousClock.now + .seconds(3)
            let (answers, pairedSends) = try await withThrowingTaskGroup(of: ([AckStatus?], [Int32]).self) { group in
                for (identity, source) in strangers {
                    group.addTask {
                        var statuses: [AckStatus?] = []
                        for _ in 0..<40 where ContinuousClock.now < deadline {
                            let sender = identity?.deviceID.uppercaseText ?? UUID().uuidString
                            statuses += try await exchange(
                                (0..<4).map { _ in Self.largeStore(from: sender) },
                                port: bobPort, as: identity, from: source
                            ).map(\.status)
                        }
                        return (statuses, [])
                    }
                }
                group.addTask {
                    var exits: [Int32] = []
                    for index in 0..<5 {
                        try await Task.sleep(for: .milliseconds(400))
                        exits.append(
                            try await alice.hexctl([
                                "send", "--no-queue", "--to", "bob",
                                "https://paired.example/\(index)",
                            ]).status)
                    }
                    return ([], exits)
                }
                var all: ([AckStatus?], [Int32]) = ([], [])
                for try await (statuses, exits) in group {
                    all.0 += statuses
                    all.1 += exits
                }
                return all
            }
            #expect(pairedSends == [0, 0, 0, 0, 0], "the paired peer's hexes are acked throughout the attack")
            let stored = answers.filter { $0 == .stored }.count
            #expect(
                stored > 0 && stored < answers.count && answers.allSatisfy { $0 == .stored || $0 == .rejected },
                "\(stored) of \(answers.count) stored")
            let storage = try #require(try await bob.hexctlJSON(StatusReport.self, ["status"]).storage)
            #expect(storage.strangersBytes <= 6 << 20)
            let used = SmallDisk.bytesUsed(in: bob.dataDirectory)
            let theirs = ByteCount.text(storage.strangersBytes)
            let held = "\(ByteCount.text(used)) on disk for \(theirs) of strangers' hexes"
            #expect(used <= 2 * (6 << 20) + (2 << 20) + (1 << 20), "\(held)")

            #expect(bob.stop() == 0)
            bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port, directory: disk.directory,
                extraArguments: settings)
            #expect(try await bob.hexctlJSONLines(HexSummary.self, ["inbox", "--limit", "1000"]).count == stored + 5)
            try await waitUntil("Alice lists Bob again", timeout: .seconds(10)) {
                try await alice.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Bob" }
            }
            let afterwards = try await alice.hexctl([
                "send", "--no-queue", "--to", "bob",
                "https://paired.example/after",
            ])
            #expect(afterwards.status == 0, "\(afterwards.standardError)")
        }
    }
}
