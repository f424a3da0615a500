import HexControl
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// Current (2.x) and legacy (1.x, `--app-version 1.0 --legacy`) daemons in every direction, and
    /// the example envelopes replayed through `hexctl raw` against a running daemon.
    @Suite struct VersionSkewTests {
        struct Pair: Sendable, CustomStringConvertible {
            let senderLegacy: Bool
            let receiverLegacy: Bool
            var description: String {
                "\(senderLegacy ? "legacy" : "current") -> \(receiverLegacy ? "legacy" : "current")"
            }
        }

        static func arguments(legacy: Bool) -> [String] { legacy ? ["--app-version", "1.0", "--legacy"] : [] }

        @Test(arguments: [
            Pair(senderLegacy: false, receiverLegacy: false), Pair(senderLegacy: false, receiverLegacy: true),
            Pair(senderLegacy: true, receiverLegacy: false), Pair(senderLegacy: true, receiverLegacy: true),
        ])
        func aHexCrossesEveryVersionPairAndABlockIsReported(_ pair: Pair) async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let sender = try await DaemonProcess(
                name: "Sender", discoveryPort: port, extraArguments: Self.arguments(legacy: pair.senderLegacy))
            let receiver = try await DaemonProcess(
                name: "Receiver", discoveryPort: port, extraArguments: Self.arguments(legacy: pair.receiverLegacy))
            try await waitUntil("the sender lists the receiver", timeout: .seconds(10)) {
                try await sender.hexctlJSONLines(PeerInfo.self, ["peers"]).contains {
                    $0.name == "Receiver" && $0.legacy == pair.receiverLegacy
                }
            }

            let send = try await sender.hexctl([
                "send", "--to", "Receiver", "-d", "skew", "https://example.com/x", "--json",
            ])
            #expect(send.status == 0, "\(pair): \(send.standardError)")
            let report = try ControlCoding.decode(SendReport.self, from: Array(send.standardOutput.utf8))
            let acknowledged = !pair.senderLegacy && !pair.receiverLegacy
            #expect(report.status == (acknowledged ? .stored : nil), "\(pair): an Ack only between two current peers")
            #expect((report.messageID != nil) == acknowledged, "\(pair): a messageID only between two current peers")
            let stored = try #require(try await receiver.newestInboxHex())
            #expect(
                stored.hexDescription == "skew" && stored.senderName == "Sender"
                    && stored.links.first?.service == .unknown)
            #expect(
                stored.senderTrust == (acknowledged ? .new : .plaintext),
                "\(pair): TLS between current peers (a key met for the first time), plaintext with a legacy one")

            // The receiver blocks the sender: a current sender learns it from the Ack, a legacy one
            // from the original Alert; either way hexctl exits 77 and nothing more is stored.
            let senderUUID = try await sender.hexctlJSON(StatusReportShape.self, ["status"]).peerUUID
            #expect(try await receiver.hexctl(["block", senderUUID]).status == 0)
            let refused = try await sender.hexctl(["send", "--to", "Receiver", "https://example.com/y"])
            #expect(refused.status == 77, "\(pair): \(refused.standardError)")
            #expect(
                refused.standardError.contains(acknowledged ? "rejected" : "Receiver blocked you."),
                "\(pair): \(refused.standardError)")
            #expect(try await receiver.hexctlJSONLines(HexSummary.self, ["inbox"]).count == 1)
        }

        static let examples =
            #filePath.split(separator: "/").dropLast(3).map { "/" + $0 }.joined() + "/Examples/envelopes"

        struct Expectation: Decodable {
            struct Reply: Decodable {
                var operationType: String
                var status: String?
                var messageID: String?
                var message: String?
            }
            struct Stored: Decodable {
                var hexDescription: String
                var senderName: String
            }
            var setup: [String: [String]]?
            var reply: Reply?
            var stored: Stored?
        }

        /// Each example is followed by a line over the daemon's `--max-line`: the daemon answers it
        /// (an Ack `invalid`) and closes, so `raw` ends there, and whatever came before that answer
        /// is all the example got. No reply is ever taken for silence after a guessed wait.
        @Test func everyExampleEnvelopeGetsItsDocumentedReplyFromARunningDaemon() async throws {
            let limit = 4_096
            let daemon = try await DaemonProcess(
                name: "Example Receiver", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--max-line", String(limit)])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.examples).filter {
                $0.hasSuffix(".envelope")
            }.sorted()
            #expect(names.count >= 16)
            for name in names {
                let base = Self.examples + "/" + name.dropLast(".envelope".count)
                let expected = try JSONDecoder().decode(
                    Expectation.self, from: try #require(FileManager.default.contents(atPath: base + ".expected.json")))
                for sender in expected.setup?["blockedSenders"] ?? [] {
                    #expect(try await daemon.hexctl(["block", sender]).status == 0)
                }
                var input = try #require(FileManager.default.contents(atPath: Self.examples + "/" + name))
                if input.last != UInt8(ascii: "\n") { input.append(UInt8(ascii: "\n")) }
                input.append(contentsOf: Array(repeating: UInt8(ascii: "x"), count: limit + 1) + [UInt8(ascii: "\n")])
                let result = try await daemon.hexctl(
                    ["raw", "127.0.0.1:\(port)", "-", "--timeout", "20"], input: input)
                #expect(result.status == 0, "\(name): \(result.standardError)")
                var replies = try result.standardOutput.split(separator: "\n")
                    .map { try Envelope.decode(from: Array($0.utf8)) }
                let closing = replies.popLast()
                let closedForLength = closing?.message?.contains("line longer than \(limit) bytes") == true
                #expect(
                    closing?.status == .invalid && closedForLength,
                    "\(name): the daemon answered the over-long line last: \(result.standardOutput)")
                if let reply = expected.reply {
                    #expect(replies.count == 1, "\(name): \(result.standardOutput)")
                    #expect(replies.first?.operationType.rawValue == reply.operationType, "\(name)")
                    #expect(replies.first?.status?.rawValue == reply.status, "\(name)")
                    #expect(replies.first?.messageID == reply.messageID, "\(name)")
                    if let message = reply.message { #expect(replies.first?.message == message, "\(name)") }
                } else {
                    #expect(replies.isEmpty, "\(name): no reply expected, got \(result.standardOutput)")
                }
                if let stored = expected.stored {
                    let top = try #require(try await daemon.hexctlJSONLines(HexSummary.self, ["inbox"]).first)
                    #expect(
                        top.hexDescription == stored.hexDescription && top.senderName == stored.senderName, "\(name)")
                }
            }
        }
    }
}
