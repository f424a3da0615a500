import Foundation
import HexCommandLine
import HexControl
import HexEngine
import HexHarness
import HexKit
import HexNet
import HexStore
import HexTLS
import HexTestSupport
import Synchronization
import Testing

@testable import HexDaemon

extension ProcessTests {
    /// The attacks of issue 18 against real daemons on loopback, each bounded: a device ID is the
    /// key behind it, and no datagram or first contact can make another host speak for it.
    @Suite struct IdentityAttackTests {
        /// Writes `envelope` to 127.0.0.1:`port`, over TLS as `identity` (plaintext when nil), and
        /// returns the answer.
        private func exchange(
            _ envelope: Envelope, port: UInt16, as identity: TLSIdentity?, from source: IPAddress? = nil
        ) async throws -> Envelope {
            let answers = try await CommandLineTests.exchange([envelope], port: port, as: identity, from: source)
            return try #require(answers.first)
        }

        private func store(from sender: String, name: String, _ description: String) -> Envelope {
            .store(
                HexJM(
                    senderUUID: sender, senderName: name, hexDescription: description, hexColor: "#FF0000",
                    links: [LinkJM(url: "https://pay.example/invoice")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
        }

        private func identity(_ name: String, in directory: TemporaryDirectory) throws -> TLSIdentity {
            try peerIdentity(name, in: directory)
        }

        /// The key and certificate of a daemon not started yet, made where it will find them:
        /// its ID is known before it ever announces itself.
        private func preparedIdentity(of daemonDirectory: TemporaryDirectory) throws -> TLSIdentity {
            let data = DataDirectory(explicit: daemonDirectory.file("data"), environment: [:])
            try FileManager.default.createDirectory(
                atPath: data.path, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            return try TLSIdentity.loadOrCreate(
                keyPath: data.keyPath, certificatePath: data.certificatePath,
                commonName: "hexd device"
            ).0
        }

        private func waitForPeer(
            _ name: String, of daemon: DaemonProcess,
            where holds: @escaping (PeerInfo) -> Bool = { _ in true }
        ) async throws {
            try await waitUntil("\(daemon.name) lists \(name)", timeout: .seconds(10)) {
                try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == name && holds($0) }
            }
        }

        /// A stranger that reaches a daemon over TLS before the real peer does, claiming the real
        /// peer's ID, is refused naming both IDs; nothing is pinned to it, and the real peer is
        /// then taken, its key marked as met for the first time, then as pinned.
        @Test func aStrangerClaimingAPeersIDBeforeFirstContactIsRefused() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let honest = try await DaemonProcess(name: "Honest", discoveryPort: port)
            let honestID = try await honest.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            let alicePort = try await alice.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            #expect(honestID.isKeyDerivedID)

            let directory = try TemporaryDirectory()
            let mallory = try identity("mallory", in: directory)
            for claim in [honestID, honestID.lowercased(), " " + honestID] {
                let ack = try await exchange(
                    store(from: claim, name: "Honest", "pay this invoice"), port: alicePort,
                    as: mallory)
                #expect(ack.status == .rejected, "\(claim): \(ack.message ?? "")")
                #expect(
                    ack.message?.contains(honestID) == true
                        && ack.message?.contains(mallory.deviceID.uppercaseText) == true,
                    "both IDs named: \(ack.message ?? "")")
            }
            #expect(try await alice.hexctlJSONLines(HexSummary.self, ["inbox"]).isEmpty)

            #expect(
                try await honest.hexctl([
                    "send", "--to", "127.0.0.1:\(alicePort)",
                    "https://honest.example/first",
                ]).status == 0)
            #expect(
                try await honest.hexctl([
                    "send", "--to", "127.0.0.1:\(alicePort)",
                    "https://honest.example/second",
                ]).status == 0)
            let inbox = try await alice.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(inbox.map(\.senderUUID) == [honestID, honestID])
            #expect(
                inbox.map(\.senderTrust) == [.pinned, .new],
                "newest first: the first hex met the key, the second was known by it")
            let listed = try await alice.hexctl(["inbox"]).standardOutput
            #expect(
                listed.contains("\"Honest\" \(honestID.prefix(8)) (new)"),
                "the short ID goes with the name:\n\(listed)")
        }

        /// UUIDs that look like a peer's (braces, no hyphens, invisible characters) are no UUID:
        /// the hex is kept without an ID, never as that peer's; plaintext never speaks for a
        /// derived ID; and a block holds against the UUID however it is spaced or cased.
        @Test func lookAlikeUUIDsAreNoIdentity() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            let alicePort = try await alice.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let legacy = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
            let lookAlikes = [
                "{\(legacy)}", legacy.replacingOccurrences(of: "-", with: ""),
                "6\u{200D}" + legacy.dropFirst(),
                legacy + "\u{200B}", legacy.replacingOccurrences(of: "-", with: "\u{2010}"),
            ]
            for lookAlike in lookAlikes {
                let ack = try await exchange(
                    store(from: lookAlike, name: "Honest", "look-alike"), port: alicePort,
                    as: nil)
                #expect(ack.status == .stored, "\(lookAlike.debugDescription): \(ack.message ?? "")")
            }
            let stored = try await alice.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(
                stored.count == lookAlikes.count && stored.allSatisfy { $0.senderUUID.isEmpty },
                "\(stored.map(\.senderUUID))")
            let listed = try await alice.hexctl(["inbox"]).standardOutput
            #expect(listed.components(separatedBy: "(no ID)").count == lookAlikes.count + 1)

            let derived = try identity("honest", in: try TemporaryDirectory()).deviceID.uppercaseText
            let claim = try await exchange(
                store(from: derived, name: "Honest", "plaintext claim"), port: alicePort,
                as: nil)
            #expect(claim.status == .rejected && claim.message?.contains("derived") == true, "\(claim.message ?? "")")

            #expect(try await alice.hexctl(["block", legacy]).status == 0)
            for spelling in [legacy.lowercased(), " \(legacy)\n"] {
                let ack = try await exchange(store(from: spelling, name: "Old", "blocked"), port: alicePort, as: nil)
                #expect(ack.status == .rejected, "\(spelling.debugDescription) is the blocked UUID")
            }
            #expect(try await alice.hexctlJSONLines(HexSummary.self, ["inbox"]).count == lookAlikes.count)
        }

        /// Beacons naming a peer's ID that are not its own (unsigned, or signed by another key)
        /// are dropped before the peer is ever heard: the first send, under every policy, goes
        /// to the holder of the key and never to the host that forged them.
        @Test(arguments: ["anyone", "known", "paired"])
        func theFirstSendGoesToTheKeyHolder(policy: String) async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alice = try await DaemonProcess(
                name: "Alice", discoveryPort: port,
                extraArguments: ["--accept", policy])
            let honestDirectory = try TemporaryDirectory()
            let honestKey = try preparedIdentity(of: honestDirectory)
            let honestID = honestKey.deviceID.uppercaseText

            let directory = try TemporaryDirectory()
            let attacker = try AttackingServer(directory: directory)
            let evil = try identity("evil", in: directory)
            let spoofer = try DatagramSocket(address: try #require(IPAddress("127.0.0.66")), port: 0)
            let unsigned = Beacon(
                kind: .announce, peer: honestID, instance: UUID().uuidString, name: "Honest",
                versionID: HexdVersion.current, port: attacker.port, interval: 600,
                capabilities: ["ack", "tls"],
                fingerprint: honestKey.fingerprint.description)
            var mislabelled = try #require(unsigned.signed(by: evil, boot: 1, sequence: 1))
            mislabelled.peer = honestID
            let broadcast = try #require(IPAddress("127.255.255.255"))
            func spoof() throws {
                for beacon in [unsigned, mislabelled] { try spoofer.send(beacon.encoded(), to: broadcast, port: port) }
            }
            try await waitUntil("Alice drops the forged beacons", timeout: .seconds(5)) {
                try spoof()
                return try await alice.hexctlJSON(StatusReport.self, ["status"]).datagramsForged ?? 0 >= 4
            }
            #expect(try await alice.hexctlJSONLines(PeerInfo.self, ["peers"]).isEmpty, "no forged peer listed")

            let honest = try await DaemonProcess(name: "Honest", discoveryPort: port, directory: honestDirectory)
            try spoof()
            try await waitForPeer("Honest", of: alice) { $0.uuid == honestID }
            try spoof()
            let sent = try await alice.hexctl([
                "send", "--to", "Honest", "https://cloud.example/s/first-secret",
                "--json",
            ])
            #expect(sent.status == 0, "\(sent.standardError)")
            #expect(try await honest.newestInboxHex()?.links.map(\.url) == ["https://cloud.example/s/first-secret"])
            #expect(attacker.handshakes == 0 && attacker.bytesAfterHandshake == 0, "the forger was never dialled")
        }

        /// A host replays a peer's beacons (those of an earlier start, its `bye` among them, and
        /// its latest from another address), spoofs unsigned `bye`s and signs beacons with a
        /// key of its own: the peer stays listed where it is, and every send queued meanwhile is
        /// delivered, none given up.
        @Test func replayedBeaconsAndSpoofedByesChangeNothing() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let listener = try DatagramSocket(port: port)
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port)
            var bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            let bobID = try await bob.hexctlJSON(StatusReport.self, ["status"]).peerUUID

            // Bob's beacons of this start, then its bye: captured as any host on the LAN hears them.
            var captured: [[UInt8]] = []
            let capturing = Task {
                var heard: [[UInt8]] = []
                while let datagram = try? await listener.receive(maximumLength: Beacon.maximumSize) {
                    if Beacon.decode(datagram.bytes)?.peer == bobID { heard.append(datagram.bytes) }
                    if Beacon.decode(datagram.bytes)?.kind == .bye { return heard }
                }
                return heard
            }
            try await Task.sleep(for: .seconds(1))
            #expect(bob.stop() == 0)
            captured = await capturing.value
            #expect(
                captured.count >= 3 && Beacon.decode(captured.last ?? [])?.kind == .bye,
                "\(captured.count) beacons")
            bob = try await DaemonProcess(name: "Bob", discoveryPort: port, directory: bob.directory)
            try await waitForPeer("Bob", of: alice)

            let directory = try TemporaryDirectory()
            let evil = try identity("evil", in: directory)
            let spoofer = try DatagramSocket(address: try #require(IPAddress("127.0.0.66")), port: 0)
            let broadcast = try #require(IPAddress("127.255.255.255"))
            var forgedBye = try #require(Beacon.decode(captured.last ?? []))
            forgedBye.signature = nil
            var evilBeacon = try #require(
                Beacon(
                    kind: .announce, peer: bobID, instance: UUID().uuidString, name: "Bob",
                    versionID: HexdVersion.current, port: 1, interval: 600,
                    capabilities: ["ack", "tls"]
                )
                .signed(by: evil, boot: .max, sequence: .max))
            evilBeacon.peer = bobID
            let attackStart = Date()
            let attack = Task {
                let until = ContinuousClock.now + .seconds(4)
                while ContinuousClock.now < until, !Task.isCancelled {
                    for bytes in captured + [forgedBye.encoded(), evilBeacon.encoded()] {
                        try? spoofer.send(bytes, to: broadcast, port: port)
                    }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            for index in 0..<5 {
                let sent = try await alice.hexctl([
                    "send", "--to", "bob",
                    "https://example.com/during-the-attack/\(index)",
                ])
                #expect(sent.status == 0, "send \(index): \(sent.standardError)")
            }
            await attack.value
            #expect(try await bob.hexctlJSONLines(HexSummary.self, ["inbox"]).count == 5, "all five delivered")
            let status = try await alice.hexctlJSON(StatusReport.self, ["status"])
            #expect(status.datagramsReplayed ?? 0 > 0 && status.datagramsForged ?? 0 > 0, "\(status)")
            let listed = try await alice.hexctlJSONLines(PeerInfo.self, ["peers"]).first { $0.uuid == bobID }
            #expect(
                listed?.endpoint.hasPrefix("127.0.0.1:") == true,
                "Bob stays where it is: \(String(describing: listed))")
            let events = try await alice.events { $0.filter { $0.kind == .sendAcked }.count >= 5 }
                .filter { $0.time >= attackStart }
            let troubled = events.filter {
                $0.kind == .sendFailed || $0.kind == .sendRetrying || ($0.kind == .peerLost && $0.peerUUID == bobID)
            }
            #expect(troubled.isEmpty, "\(troubled.map { "\($0.kind) \($0.message ?? "")" })")
        }

        /// A data directory from before IDs came from keys: the daemon takes the ID its key
        /// derives and says so once; a peer that pinned (and paired) its old UUID moves the pin,
        /// its trust and its queued send to the new ID at the first contact that proves the key.
        @Test func anOldDataDirectoryMigratesAndItsPeersFollow() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let bobDirectory = try TemporaryDirectory()
            let bobKey = try preparedIdentity(of: bobDirectory)
            let bobData = DataDirectory(explicit: bobDirectory.file("data"), environment: [:])
            let oldBobID = try HexDatabase(path: bobData.databasePath).localIdentity(name: "Bob").identity.uuid
            #expect(!oldBobID.isKeyDerivedID)

            let aliceDirectory = try TemporaryDirectory()
            _ = try preparedIdentity(of: aliceDirectory)
            let aliceData = DataDirectory(explicit: aliceDirectory.file("data"), environment: [:])
            let aliceDatabase = try HexDatabase(path: aliceData.databasePath)
            let oldAliceID = try aliceDatabase.localIdentity(name: "Alice").identity.uuid
            try aliceDatabase.setPin(
                PeerPin(
                    peerUUID: oldBobID, fingerprint: bobKey.fingerprint.description,
                    trust: .paired))
            let queued = Envelope.store(
                HexJM(
                    senderUUID: oldAliceID, senderName: "Alice",
                    hexDescription: "queued before the upgrade",
                    hexColor: "#00AA00", links: [LinkJM(url: "https://example.com/queued")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
            #expect(
                try aliceDatabase.enqueue(
                    OutboxEntry(
                        messageID: try #require(queued.messageID), peerUUID: oldBobID, address: nil, label: "Bob",
                        kind: .hex,
                        envelope: String(decoding: queued.encodedLine(), as: UTF8.self), legacy: false,
                        createdAt: Date(),
                        expiresAt: Date() + 3_600, nextAttemptAt: Date())))

            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port, directory: bobDirectory)
            let bobID = try await bob.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            #expect(bobID == bobKey.deviceID.uppercaseText)
            #expect(bob.log.contains("now \(bobID), the ID its key derives; it was \(oldBobID)"), "\(bob.log)")
            let alice = try await DaemonProcess(name: "Alice", discoveryPort: port, directory: aliceDirectory)

            try await waitUntil("Bob holds the queued hex", timeout: .seconds(15)) {
                try await bob.newestInboxHex()?.hexDescription == "queued before the upgrade"
            }
            let received = try await bob.newestInboxHex()
            #expect(received?.senderUUID == (try await alice.hexctlJSON(StatusReport.self, ["status"]).peerUUID))
            try await waitForPeer("Bob", of: alice) { $0.uuid == bobID && $0.trust == .paired }
            #expect(
                try await alice.hexctl(["trust", "--reset", oldBobID]).status == 1,
                "nothing is left under the old UUID")

            #expect(bob.stop() == 0)
            let restarted = try await DaemonProcess(name: "Bob", discoveryPort: port, directory: bobDirectory)
            #expect(!restarted.log.contains("the ID its key derives"), "said once")
        }

        /// While strangers ask to pair 300 times a second, from 50 addresses and with keys of
        /// their own (all named "Honest", some claiming Honest's ID), a peer announced before the
        /// flood pairs with the right code, accepted by name; strangers are let in at the rate.
        @Test func anHonestPairingCompletesDuringAFloodOfRequests() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            // Each request comes on a TLS connection of its own, from one /24: what is tested is
            // pairing's own admission, so the handshakes themselves are not held to a budget here.
            let alice = try await DaemonProcess(
                name: "Alice", discoveryPort: port, extraArguments: ["--stranger-handshakes", "1000000"])
            let honest = try await DaemonProcess(name: "Honest", discoveryPort: port)
            let alicePort = try await alice.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let honestID = try await honest.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            try await waitForPeer("Honest", of: alice)
            try await waitForPeer("Alice", of: honest)

            let directory = try TemporaryDirectory()
            let strangers = try (0..<60).map { try identity("stranger\($0)", in: directory) }
            let tally = FloodTally()
            let start = ContinuousClock.now
            let requests = 900
            let flood = Task {
                await withTaskGroup(of: Void.self) { group in
                    for lane in 0..<10 {
                        group.addTask {
                            for index in stride(from: lane, to: requests, by: 10) {
                                // Paced at 300 a second in all.
                                try? await Task.sleep(
                                    until: start + .milliseconds(index * 1_000 / 300),
                                    clock: .continuous)
                                let stranger = strangers[index % strangers.count]
                                let claim = index % 3 == 0 ? honestID : stranger.deviceID.uppercaseText
                                let request = Envelope.pair(
                                    PairJM(
                                        step: .request, senderUUID: claim,
                                        senderName: "Honest",
                                        commitment: String(repeating: "ab", count: 32)),
                                    versionID: HexdVersion.current,
                                    messageID: UUID().uuidString)
                                let source = IPAddress("127.0.1.\(index % 50 + 1)")
                                let answer = try? await exchange(request, port: alicePort, as: stranger, from: source)
                                tally.record(answer)
                            }
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            let asked = try await honest.hexctlJSON(TrustReport.self, ["pair", "Alice"])
            let code = try #require(asked.code)
            let accepted = try await alice.hexctlJSON(TrustReport.self, ["pair", "--accept", "Honest"])
            #expect(accepted.peerUUID == honestID && accepted.code == code && accepted.trust == .paired)
            await flood.value
            let elapsed = (ContinuousClock.now - start).inSeconds
            let (nonces, refusals) = tally.counts
            #expect(
                refusals > 0 && nonces + refusals >= requests / 2,
                "\(nonces + refusals) of \(requests) answered: the flood arrived")
            #expect(
                Double(nonces) <= PairingAdmission.burst + PairingAdmission.rate * elapsed + 1,
                "\(nonces) strangers admitted in \(elapsed) s")
            try await waitForPeer("Honest", of: alice) { $0.uuid == honestID && $0.trust == .paired }
            try await waitForPeer("Alice", of: honest) { $0.trust == .paired }
        }
    }
}

/// What the strangers of a pairing flood were answered.
private final class FloodTally: Sendable {
    private let state = Mutex<(nonces: Int, refusals: Int)>((0, 0))

    var counts: (nonces: Int, refusals: Int) { state.withLock { $0 } }

    func record(_ answer: Envelope?) {
        state.withLock {
            if answer?.pair?.step == .nonce { $0.nonces += 1 } else if answer?.status == .rejected { $0.refusals += 1 }
        }
    }
}
