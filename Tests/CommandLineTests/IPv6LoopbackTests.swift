import Foundation
import HexControl
import HexHarness
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// hexd takes envelopes over IPv6 beside IPv4, and an endpoint is written with brackets
    /// wherever a user gives one (`send --to`, `raw`, `--peer`): real daemons on `::1`.
    @Suite struct IPv6LoopbackTests {
        @Test func aHexGoesToABracketedIPv6AddressAndAnUnbracketedOneIsAUsageError() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            let tcpPort = try await grace.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let address = "[::1]:\(tcpPort)"

            let sent = try await ada.hexctl([
                "send", "--to", address, "-d", "over IPv6", "https://example.com/v6",
                "--json",
            ])
            #expect(sent.status == 0, "\(sent.standardError)")
            let report = try ControlCoding.decode(SendReport.self, from: Array(sent.standardOutput.utf8))
            #expect(report.status == .stored && report.peerKey != nil, "stored, over TLS: \(report)")
            #expect(report.peer.contains(address), "\(report.peer)")
            let hex = try #require(try await grace.newestInboxHex())
            #expect(hex.hexDescription == "over IPv6" && hex.senderName == "Ada")
            #expect(grace.log.contains("remote=[::1]:"), "the receiver logs the IPv6 remote in brackets")

            let line = Envelope.store(
                HexJM(
                    senderUUID: UUID().uuidString, senderName: "raw", hexDescription: "raw v6",
                    hexColor: "#123456", links: [LinkJM(url: "https://example.com/raw")]),
                versionID: "2.0.0", messageID: UUID().uuidString
            ).encodedLine()
            let raw = try await ada.hexctl(["raw", address, "-", "--timeout", "5"], input: Data(line))
            #expect(raw.status == 0 && raw.standardOutput.contains(#""status":"stored""#), "\(raw.standardError)")

            for command in [
                ["send", "--to", "::1:\(tcpPort)", "https://example.com"], ["raw", "::1:\(tcpPort)", "-"],
            ] {
                let refused = try await ada.hexctl(command)
                #expect(
                    refused.status == 64 && refused.standardError.contains(address),
                    "\(command): \(refused.standardError)")
            }
            let peer = try await PackageExecutable.run(
                "hexd",
                [
                    "--peer", "fd00::2",
                    "--data-dir", ada.directory.file("x"),
                ])
            #expect(peer.status == 64 && peer.standardError.contains("[fd00::2]"), "\(peer.standardError)")
        }
    }
}
