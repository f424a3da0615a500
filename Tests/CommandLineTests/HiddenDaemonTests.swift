import Foundation
import HexCommandLine
import HexControl
import HexDaemon
import HexHarness
import HexKit
import HexTestSupport
import KDEConnectCarrier
import LocalSendCarrier
import QuickShareCarrier
import Testing

extension ProcessTests {
    /// `hexctl visibility` with real daemons on loopback: a hidden daemon drops out of its peers'
    /// tables at once and stays out of a newcomer's, still hears and still takes sends by address,
    /// stays hidden across a restart, and a visibility for a while ends by itself. A lone daemon
    /// says which ports a firewall must let through.
    @Suite struct HiddenDaemonTests {
        private func names(of daemon: DaemonProcess) async throws -> [String] {
            try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"]).map(\.name).sorted()
        }

        @Test func aHiddenDaemonIsNotListedButHearsAndIsReachedByAddress() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) { try await names(of: ada) == ["Grace"] }

            let hidden = try await grace.hexctlJSON(VisibilityReport.self, ["visibility", "hidden"])
            #expect(hidden == VisibilityReport(.hidden, at: Date()))
            // Grace said bye: Ada drops her at once, not three intervals later.
            try await waitUntil("Ada drops Grace", timeout: .seconds(10)) { try await names(of: ada).isEmpty }
            let lost = try await ada.events { $0.contains { $0.kind == .peerLost && $0.peer == "Grace" } }
            #expect(lost.last { $0.kind == .peerLost }?.message == "said bye")

            // A newcomer hears Ada and hears nothing of Grace, who hears the newcomer.
            let carol = try await DaemonProcess(name: "Carol", discoveryPort: port)
            try await waitUntil("Carol lists Ada", timeout: .seconds(10)) { try await names(of: carol) == ["Ada"] }
            try await waitUntil("Grace lists Carol", timeout: .seconds(10)) {
                try await names(of: grace).contains("Carol")
            }
            try await Task.sleep(for: .seconds(1))
            #expect(try await names(of: carol) == ["Ada"], "ten of Grace's intervals later, still no Grace")

            // Reached by address.
            let graceStatus = try await grace.hexctlJSON(StatusReport.self, ["status"])
            #expect(graceStatus.visibility?.visibility == "hidden")
            let sent = try await ada.hexctlJSON(
                SendReport.self,
                [
                    "send", "--to", "127.0.0.1:\(graceStatus.tcpPort)",
                    "https://example.com/by-address",
                ])
            #expect(sent.status == .stored, "\(sent)")

            // Hidden across a restart.
            #expect(grace.stop() == 0)
            let again = try await DaemonProcess(name: "Grace", discoveryPort: port, directory: grace.directory)
            #expect(try await again.hexctlJSON(StatusReport.self, ["status"]).visibility?.visibility == "hidden")
            try await Task.sleep(for: .seconds(1))
            #expect(try await names(of: carol) == ["Ada"], "the restarted Grace announced nothing")

            // Visible for two seconds: listed, then dropped again as she hides by herself.
            let shown = try await again.hexctlJSON(VisibilityReport.self, ["visibility", "for", "2s"])
            #expect(shown.visibility == "visible" && shown.visibleUntil != nil)
            try await waitUntil("Carol lists Grace", timeout: .seconds(10)) {
                try await names(of: carol).contains("Grace")
            }
            try await waitUntil("Carol drops Grace", timeout: .seconds(10)) { try await names(of: carol) == ["Ada"] }
            let now = try await again.hexctlJSON(VisibilityReport.self, ["visibility"])
            #expect(now == VisibilityReport(.hidden, at: Date()))
            let changes = try await again.events { $0.filter { $0.kind == .visibilityChanged }.count >= 2 }
                .filter { $0.kind == .visibilityChanged }.compactMap(\.message)
            #expect(changes.first?.hasPrefix("visible until ") == true && changes.last == "hidden", "\(changes)")
            withExtendedLifetime(ada) {}
        }

        @Test func aBadVisibilityIsAUsageError() async throws {
            let daemon = try await DaemonProcess(name: "Alone", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            for words in [["invisible"], ["for"], ["for", "2x"], ["for", "2d"], ["hidden", "now"]] {
                let result = try await daemon.hexctl(["visibility"] + words)
                #expect(result.status == 64 && result.standardError.contains("hexctl visibility"), "\(words)")
            }
            #expect(try await daemon.hexctlJSON(VisibilityReport.self, ["visibility"]).visibility == "visible")
        }

        /// Alone for 30 beacon intervals, a daemon names the ports to let through; once a peer is
        /// heard, the hint goes.
        @Test func aLoneDaemonNamesThePortsAFirewallMustLetThrough() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let alone = try await DaemonProcess(name: "Alone", discoveryPort: port, interval: 0.1)
            let status = try await alone.hexctlJSON(StatusReport.self, ["status"])
            var hint = ""
            try await waitUntil("a hint in status", timeout: .seconds(15)) {
                hint = try await alone.hexctlJSON(StatusReport.self, ["status"]).discoveryHint ?? ""
                return !hint.isEmpty
            }
            #expect(
                hint.contains("UDP \(port)") && hint.contains("TCP \(status.tcpPort)")
                    && hint.contains("firewall-cmd --add-service=hexd") && hint.contains("ufw allow hexd"), "\(hint)")
            #expect(try await alone.hexctl(["status"]).standardOutput.contains("hint: no peer heard"))
            let other = try await DaemonProcess(name: "Other", discoveryPort: port)
            try await waitUntil("the hint goes", timeout: .seconds(10)) {
                try await alone.hexctlJSON(StatusReport.self, ["status"]).discoveryHint == nil
            }
            withExtendedLifetime(other) {}
        }

        /// The firewall profiles name hexd's default ports, mDNS's, LocalSend's, KDE Connect's and Quick Share's,
        /// and parse as firewalld and ufw read them.
        @Test func theFirewallProfilesOpenTheDefaultPorts() async throws {
            let defaults = DaemonConfiguration(dataDirectory: DataDirectory(explicit: "/unused", environment: [:]))
            let check = """
                import configparser, sys, xml.etree.ElementTree as tree
                service = tree.parse(sys.argv[1]).getroot()
                print(sorted(p.get("protocol") + " " + p.get("port") for p in service.findall("port")))
                profile = configparser.ConfigParser()
                profile.read(sys.argv[2])
                print(profile["hexd"]["ports"])
                """
            let examples = ServiceTests.examples
            let result = try await PackageExecutable.run(
                "/usr/bin/env",
                [
                    "python3", "-c", check, examples + "/firewalld/hexd.xml", examples + "/ufw/hexd",
                ])
            #expect(result.status == 0, "\(result.standardError)")
            let (tcp, udp) = (defaults.tcpPort, defaults.discovery.port)
            let (localSend, kde, quickShare) = (
                defaults.carriers[LocalSendSettings.self].port, defaults.carriers[KDEConnectSettings.self].port,
                defaults.carriers[QuickShareSettings.self].port
            )
            #expect(
                result.standardOutput
                    == "['tcp \(kde)-1764', 'tcp \(tcp)', 'tcp \(quickShare)', 'tcp \(localSend)', 'udp \(kde)', "
                    + "'udp \(udp)', 'udp \(localSend)', 'udp 5353']\n"
                    + "\(udp)/udp|\(tcp)/tcp|5353/udp|\(localSend)|\(kde)/udp|\(kde):1764/tcp|\(quickShare)/tcp\n")
        }
    }
}
