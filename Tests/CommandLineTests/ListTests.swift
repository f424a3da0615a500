import HexControl
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// Lists stream item by item and page with --limit and --after; no stored hex, however large,
    /// can stop the others from being listed or shown.
    @Suite struct ListTests {
        private func store(_ description: String, links: Int = 1, url: String = "https://example.com", to port: UInt16)
            async throws
        {
            let hex = HexJM(
                senderUUID: UUID().uuidString, senderName: "Tester", hexDescription: description, hexColor: "#FFFFFF",
                links: (0..<links).map { LinkJM(url: "\(url)/\($0)", linkDescription: "d", service: .unknown) })
            let connection = StreamConnection(
                socket: try await StreamConnector.tcp(
                    to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5)), maximumLineLength: 1 << 20)
            try await connection.writeLine(
                Envelope.store(hex, versionID: "2.0.0", messageID: UUID().uuidString).encodedLine(),
                timeout: .seconds(30))
            guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(30)) else {
                throw SocketError.timedOut("the Ack")
            }
            #expect(try Envelope.decode(from: reply).status == .stored)
        }

        @Test func hugeHexesNeverBreakTheInbox() async throws {
            // One sender's 24 MB is most of the default share of a sender not paired (32 MiB).
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--sender-budget", "64MiB"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            // Two hexes of 12 MB each: 200 links with 60 kB URLs, and a 60 kB description.
            let longURL = "https://example.com/" + String(repeating: "u", count: 60_000)
            for index in 0..<2 {
                try await store(String(repeating: "\(index)", count: 60_000), links: 200, url: longURL, to: port)
            }
            try await store("small", to: port)

            let listed = try await daemon.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(listed.map(\.linkCount) == [1, 200, 200])
            #expect(listed.allSatisfy { $0.hexDescription.count <= ControlLimits.listFieldCharacters })
            let text = try await daemon.hexctl(["inbox", "--json"])
            #expect(
                text.standardOutput.split(separator: "\n").map { $0.contains(#""truncated":true"#) } == [
                    false, true, true,
                ],
                "only the cut items say so")
            #expect(try await daemon.hexctl(["inbox"]).status == 0)

            let big = listed[1].id.uuidString
            let shown = try await daemon.hexctl(["inbox", "show", big])
            #expect(shown.status == 0 && shown.standardOutput.contains("--full"), "a cut show says so")
            #expect(shown.standardOutput.utf8.count < 4_000_000)
            let full = try await daemon.hexctlJSON(Hex.self, ["inbox", "show", "--full", big])
            #expect(
                full.links.count == 200 && full.links.allSatisfy { $0.url.hasPrefix(longURL) }
                    && full.hexDescription.count == 60_000)
            let status = try await daemon.hexctlJSON(StatusReportShape.self, ["status"])
            #expect(status.tcpPort == port)
        }

        @Test func listsPageWithLimitAndAfter() async throws {
            let daemon = try await DaemonProcess(name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            for index in 1...5 { try await store("hex \(index)", to: port) }
            let first = try await daemon.hexctlJSONLines(HexSummary.self, ["inbox", "--limit", "2"])
            #expect(first.map(\.hexDescription) == ["hex 5", "hex 4"])
            let text = try await daemon.hexctl(["inbox", "--limit", "2"])
            #expect(text.standardError.contains("--after \(first[1].id.uuidString)"), "a person is told how to go on")
            let second = try await daemon.hexctlJSONLines(
                HexSummary.self, ["inbox", "--limit", "2", "--after", first[1].id.uuidString])
            #expect(second.map(\.hexDescription) == ["hex 3", "hex 2"])
            let rest = try await daemon.hexctlJSONLines(HexSummary.self, ["inbox", "--after", second[1].id.uuidString])
            #expect(rest.map(\.hexDescription) == ["hex 1"])
            #expect(
                try await daemon.hexctl(["inbox", "--after", UUID().uuidString]).status == 1,
                "an unknown cursor is an error")
            #expect(try await daemon.hexctl(["inbox", "--limit", "0"]).status == 64)
            #expect(try await daemon.hexctl(["inbox", "--after", "not-an-id"]).status == 64)
        }
    }
}
