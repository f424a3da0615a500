import Foundation
import HexControl
import HexHarness
import HexKit
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// TLS 1.3 session resumption between real processes: a client we did not write (the openssl
    /// command) and hexd itself, each resuming the session of its first connection.
    @Suite struct TLSResumptionTests {
        /// A Store from the device `id`, as a line for the openssl command's standard input.
        private static func store(from id: UUID, messageID: String) -> String {
            #"{"versionID":"2.0.0","operationType":"Store","messageID":"\#(messageID)","jmObject":"#
                + #"{"senderUUID":"\#(id.uuidString)","senderName":"OpenSSL","hexDescription":"\#(messageID)"}}"#
                + "\n"
        }

        /// `openssl s_client` resumes its first session: hexd accepts the ticket, takes the
        /// resumed connection as the same device (its pinned key), and offers no early data (0-RTT
        /// could be replayed). hexd's status counts the resumed handshake.
        @Test func theOpensslClientResumesAsTheSameDeviceWithoutEarlyData() async throws {
            let directory = try TemporaryDirectory()
            let made = try await PackageExecutable.run(
                try ExternalTool.require("openssl"),
                [
                    "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1", "-subj", "/CN=openssl client",
                    "-keyout", directory.file("client.key"), "-out", directory.file("client.crt"),
                ])
            #expect(made.status == 0, "\(made.standardError)")
            let clientID = try TLSIdentity.loadOrCreate(
                keyPath: directory.file("client.key"),
                certificatePath: directory.file("client.crt"),
                commonName: "unused"
            ).0.deviceID
            // hexd closes each connection a second after its last line, which ends s_client.
            let hexd = try await DaemonProcess(
                name: "Hexd", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--idle-timeout", "1"])
            let port = String(try await hexd.hexctlJSON(StatusReport.self, ["status"]).tcpPort)
            let client = [
                "s_client", "-connect", "127.0.0.1:" + port, "-cert", directory.file("client.crt"),
                "-key", directory.file("client.key"), "-ign_eof",
            ]
            let second = Self.store(from: clientID, messageID: "OPENSSL-2")
            #expect(FileManager.default.createFile(atPath: directory.file("early"), contents: Data(second.utf8)))

            let first = try await PackageExecutable.run(
                try ExternalTool.require("openssl"), client + ["-sess_out", directory.file("session")],
                input: Data(Self.store(from: clientID, messageID: "OPENSSL-1").utf8))
            #expect(
                first.standardOutput.contains("New, TLSv1.3")
                    && first.standardOutput.contains(#""status":"stored""#), "\(first.standardOutput)")
            let resumed = try await PackageExecutable.run(
                try ExternalTool.require("openssl"),
                client + [
                    "-sess_in", directory.file("session"), "-early_data", directory.file("early"),
                ], input: Data(second.utf8))
            #expect(resumed.standardOutput.contains("Reused, TLSv1.3"), "\(resumed.standardOutput)")
            #expect(
                resumed.standardOutput.contains("Early data was not sent")
                    && resumed.standardOutput.contains("Max Early Data: 0"), "no 0-RTT: \(resumed.standardOutput)")
            let ack = #""messageID":"OPENSSL-2","operationType":"Ack","status":"stored""#
            #expect(
                resumed.standardOutput.contains(ack),
                "stored once, from the line sent after the handshake: \(resumed.standardOutput)")

            let inbox = try await hexd.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(inbox.map(\.hexDescription) == ["OPENSSL-2", "OPENSSL-1"])
            #expect(inbox.allSatisfy { $0.senderUUID == clientID.uuidString })
            #expect(inbox.map(\.senderTrust) == [.pinned, .new], "the resumed connection proved the pinned key")
            let counts = try #require(try await hexd.hexctlJSON(StatusReport.self, ["status"]).connections)
            #expect(counts.tlsHandshakes == 2 && counts.resumedHandshakes == 1, "\(counts)")
        }

        /// hexd resumes too: once a kept connection is gone, the next send to the same peer
        /// resumes the session of the last one.
        @Test func aSendAfterTheKeptConnectionClosedResumes() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--idle-timeout", "1"])
            try await waitUntil("Ada hears Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).peers == 1
            }
            for round in 1...2 {
                let report = try await ada.hexctlJSON(
                    SendReport.self,
                    ["send", "--to", "Grace", "https://example.com/\(round)"])
                #expect(report.status == .stored, "\(report)")
                // Grace closes Ada's kept connection a second after its last line.
                try await waitUntil("Grace closes the connection", timeout: .seconds(10)) {
                    try await grace.hexctlJSON(StatusReport.self, ["status"]).connections?.open == 0
                }
            }
            let counts = try #require(try await grace.hexctlJSON(StatusReport.self, ["status"]).connections)
            #expect(counts.tlsHandshakes == 2 && counts.resumedHandshakes == 1, "\(counts)")
            let inbox = try await grace.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(inbox.map(\.senderTrust) == [.pinned, .new] && Set(inbox.map(\.senderUUID)).count == 1)
        }
    }
}
