import HexControl
import HexKit
import HexTestSupport
import Testing

import Glibc

extension ProcessTests {
    @Suite struct HexlistAndAlertTests {
        @Test func myHexlistIsKeptInOrderAndSentFromTheCommandLine() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) { try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" } }

            // Links from standard input, as a HexJM object; a flag overrides its colour.
            let file = ##"{"hexDescription":"From a file","hexColor":"#112233","links":[{"url":"https://a.example/1","linkDescription":"one","service":"Dropbox"}]}"##
            let added = try await ada.hexctl(["hexlist", "add", "--file", "-", "--color", "#abcdef", "--json"], input: Data(file.utf8))
            #expect(added.status == 0, "\(added.standardError)")
            let fromFile = try ControlCoding.decode(Hex.self, from: Array(added.standardOutput.utf8))
            #expect(fromFile.hexDescription == "From a file" && fromFile.hexColor == "#ABCDEF" && fromFile.links.first?.service == .dropbox)
            #expect(try await ada.hexctl(["hexlist", "add", "-d", "Second", "https://b.example"]).status == 0)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == ["Second", "From a file"])
            #expect(try await ada.hexctl(["hexlist", "move", String(fromFile.id.uuidString.prefix(8)), "0"]).status == 0)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == ["From a file", "Second"])

            let sent = try await ada.hexctl(["hexlist", "send", String(fromFile.id.uuidString.prefix(8)), "--to", "grace"])
            #expect(sent.status == 0 && sent.standardOutput.hasPrefix("stored by Grace"), "\(sent.standardError)")
            let received = try #require(try await grace.newestInboxHex())
            #expect(received.hexDescription == "From a file" && received.senderName == "Ada" && received.links.first?.url == "https://a.example/1")

            #expect(try await ada.hexctl(["hexlist", "remove", String(fromFile.id.uuidString.prefix(8))]).status == 0)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == ["Second"])
            #expect(try await ada.hexctl(["hexlist", "add", "--color", "blue", "https://c.example"]).status == 64, "a bad colour is a usage error")
            #expect(try await ada.hexctl(["send", "--to", "grace", "not a url"]).status == 64)
        }

        @Test func anAlertIsDeliveredAndShownAsAnEvent() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) { try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" } }
            let result = try await ada.hexctl(["alert", "--to", "Grace", "Lunch at noon?"])
            #expect(result.status == 0 && result.standardOutput.hasPrefix("received by Grace"), "\(result.standardError)")
            let events = try await grace.hexctl(["watch"], timeout: .seconds(1)).standardOutput
            #expect(events.contains("alertReceived") && events.contains("\"Lunch at noon?\""))
        }

        @Test func sigintStopsTheDaemonCleanlyToo() async throws {
            let daemon = try await DaemonProcess(name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            kill(daemon.pid, SIGINT)
            try await waitUntil("hexd exits", timeout: .seconds(10)) { !daemon.isRunning }
            #expect(daemon.log.contains("SIGINT: stopping") && !FileManager.default.fileExists(atPath: daemon.dataDirectory + "/hexd.sock"))
        }
    }
}
