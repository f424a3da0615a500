import HexControl
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import Testing

extension ProcessTests {
    /// A storm of bare ClientHellos against a real daemon (Protocol.md, section 11): strangers
    /// past their handshake budget are cut before any cryptography, while a known peer's fresh
    /// connections and an honest stranger's are served. (How fast: `hexbench identity`.)
    @Suite struct HandshakeFloodTests {
        @Test func aFloodIsCutBeforeItsHandshakesWhileAKnownPeerAndAnHonestStrangerAreServed() async throws {
            let budget = 20
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--stranger-handshakes", String(budget), "--log-level", "info"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let directory = try TemporaryDirectory()
            let friend = try peerIdentity("friend", in: directory)
            // Its first Store pins its key; from then on the address its key proved is a known peer's.
            for index in 0..<2 {
                try await expectStored(store("before \(index)", from: friend), port: port, as: friend)
            }
            let before = try #require(try await daemon.hexctlJSON(StatusReport.self, ["status"]).connections)

            // 1,600 bare ClientHellos, 400 a second, from 192 addresses of 127.21.0.0/24.
            let hello = try await cannedClientHello(as: try peerIdentity("attacker", in: directory))
            let storm = Task {
                await ClientHelloStorm.run(
                    hello, count: 1_600, perSecond: 400, to: port, from: loopbackHosts(192, network: 21))
            }
            try await Task.sleep(for: .seconds(1))
            for index in 0..<10 {
                try await expectStored(store("during \(index)", from: friend), port: port, as: friend)
            }
            // A stranger new to the daemon, in the flooding subnet, gets through on the newcomers' reserve.
            let stranger = try peerIdentity("stranger", in: directory)
            try await expectStored(
                store("a stranger", from: stranger), port: port, as: stranger, from: IPAddress("127.21.0.250"))
            let outcome = await storm.value
            let after = try #require(try await daemon.hexctlJSON(StatusReport.self, ["status"]).connections)

            // The storm lasted about 4 s: strangers get the total's burst (4 s of it) and its rate,
            // and the newcomers' reserve, a tenth of it, the same; the rest is cut.
            let bound = Int(Double(budget) * 1.1 * (4 + 6))
            #expect(outcome.answered <= bound && outcome.cutBeforeAnswer >= 1_600 - bound, "\(outcome)")
            let refused = (after.refusedBeforeHandshake ?? 0) - (before.refusedBeforeHandshake ?? 0)
            #expect(refused >= outcome.cutBeforeAnswer, "the daemon counted \(refused) cut; the storm saw \(outcome)")
            let handshakes = (after.tlsHandshakes ?? 0) - (before.tlsHandshakes ?? 0)
            #expect(handshakes <= 11, "only the friend's and the stranger's handshakes completed: \(handshakes)")
            #expect((after.fromKnownPeers ?? 0) >= 10, "the friend's connections were let through as a known peer's")
            #expect(daemon.log.contains("before their TLS handshake"), "the offenders are named in the log")
            #expect(try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).inbox == 13)
        }

        private func store(_ description: String, from identity: TLSIdentity) -> Envelope {
            .store(
                HexJM(
                    senderUUID: identity.deviceID.uppercaseText, senderName: "Friend", hexDescription: description,
                    hexColor: "#3498DB", links: [LinkJM(url: "https://example.com/flood")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
        }

        private func expectStored(
            _ envelope: Envelope, port: UInt16, as identity: TLSIdentity, from source: IPAddress? = nil
        ) async throws {
            let answer = try await exchange([envelope], port: port, as: identity, from: source).first
            #expect(answer?.status == .stored, "\(String(describing: answer))")
        }
    }
}
