import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// A hostile LAN against real daemons: hosts that hold connections, fill memory with
    /// unfinished lines, and flood discovery. Honest peers keep being served and nothing crashes.
    /// (How fast, and how much memory: `hexbench hostile` measures that against a baseline.)
    @Suite struct HostileLANTests {
        @Test func honestSendsAreAckedWhileHostsTrickleAndIdle() async throws {
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--max-connections", "200", "--log-level", "warning"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            // 600 attacking connections from 60 hosts against a cap of 200 (16 per host).
            let tricklers = ConnectionSwarm(
                count: 300, port: port, sources: loopbackHosts(30, network: 1), behaviour: .trickle(every: .seconds(1)))
            let idlers = ConnectionSwarm(
                count: 300, port: port, sources: loopbackHosts(30, network: 2), behaviour: .idle)
            try await waitUntil("the attackers fill the daemon", timeout: .seconds(20)) {
                tricklers.connected + idlers.connected >= 400
            }
            for index in 0..<40 {
                try await HonestSender.store("honest \(index)", to: port)
            }
            await tricklers.stop()
            await idlers.stop()
            let status = try await daemon.hexctlJSON(StatusReport.self, ["status"])
            #expect(status.inbox == 40, "every honest hex was stored, nothing else")
            let connections = try #require(status.connections)
            #expect(connections.closedForRoom > 0, "the stalest connections made room: \(connections)")
        }

        @Test func atItsDescriptorLimitTheDaemonBacksOffAndKeepsServing() async throws {
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--log-level", "info"], descriptorLimit: 256)
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            #expect(daemon.log.contains("the descriptor limit is 256"))
            // 600 connections from 40 hosts against 256 descriptors.
            let crowd = ConnectionSwarm(
                count: 600, port: port, sources: loopbackHosts(40, network: 5), behaviour: .idle)
            try await waitUntil("the crowd has connected", timeout: .seconds(20)) { crowd.connected >= 500 }
            // However fast the crowd comes, accepts leave descriptors free: libdispatch ends a process
            // that has none when it looks at its threads (once a second, through /proc).
            var most = 0
            for _ in 0..<20 {
                most = max(
                    most, (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd"))?.count ?? 0)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(most <= 256 - DescriptorHeadroom.kept / 2, "\(most) descriptors open of 256")
            try await daemon.explaining {
                try await HonestSender.store("at the limit", to: port, timeout: .seconds(10))
            }
            await crowd.stop()
            try await daemon.explaining { try await HonestSender.store("after the crowd", to: port) }
            #expect(try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).inbox == 2)
        }

        @Test func strangersAtTheDescriptorLimitDoNotLockTheUserOut() async throws {
            // The lowest limit hexd takes, and two listeners of strangers (hexd's own and KDE
            // Connect's) flooded at once: together their slots reach the accepts' headroom.
            let discoveryPort = try DaemonProcess.freeDiscoveryPort()
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: discoveryPort,
                extraArguments: ["--log-level", "info", "--kdeconnect", "on", "--kdeconnect-port", "1751"],
                descriptorLimit: 128)
            let friend = try await DaemonProcess(name: "Friend", discoveryPort: discoveryPort)
            var kdeConnect: UInt16?
            try await waitUntil("KDE Connect listens, and the friend is listed", timeout: .seconds(10)) {
                let status = try await daemon.hexctlJSON(StatusWithCarriers.self, ["status"])
                kdeConnect = status.carriers.first { $0.kind == "kdeconnect" }?.port
                let peers = try await daemon.hexctlJSONLines(PeerInfo.self, ["peers"])
                return kdeConnect != nil && peers.contains { $0.name == "Friend" }
            }
            let port = try await daemon.hexctlJSON(StatusWithCarriers.self, ["status"]).tcpPort
            let crowds = [
                ConnectionSwarm(count: 300, port: port, sources: loopbackHosts(40, network: 6), behaviour: .idle),
                ConnectionSwarm(
                    count: 300, port: try #require(kdeConnect), sources: loopbackHosts(40, network: 7), behaviour: .idle
                ),
            ]
            // The crowds stop however this ends: they would go on reconnecting for the rest of the run.
            var failure: (any Error)?
            do {
                try await waitUntil("the strangers reach the accepts' headroom", timeout: .seconds(20)) {
                    daemon.log.contains("would leave fewer than \(DescriptorHeadroom.kept) descriptors free")
                }
                // The control socket's clients are the user's: they keep the smaller headroom of the
                // daemon's own work (before, they met the strangers' and were refused), and so do
                // the connections the outbox opens to send the user's hexes.
                var most = 0
                for attempt in 1...5 {
                    most = max(most, Self.openDescriptors(of: daemon.pid))
                    let answer = try await daemon.hexctl(["status"], timeout: .seconds(10))
                    #expect(
                        answer.status == 0, "hexctl status \(attempt) of 5 during the flood: \(answer.standardError)")
                }
                for index in 1...3 {
                    most = max(most, Self.openDescriptors(of: daemon.pid))
                    let sent = try await daemon.hexctl(
                        ["send", "--to", "Friend", "--timeout", "10", "https://example.com/\(index)"])
                    #expect(sent.status == 0, "send \(index) of 3 during the flood: \(sent.standardError)")
                }
                // Within a few of the accepts' headroom: connections closed to make room come and go.
                #expect(
                    most >= 128 - DescriptorHeadroom.kept - 8,
                    "the strangers held the accepts' share meanwhile: \(most) descriptors open")
            } catch {
                failure = error
            }
            for crowd in crowds { await crowd.stop() }
            if let failure { throw failure }
            #expect(try await friend.hexctlJSON(StatusReportShape.self, ["status"]).inbox == 3)
        }

        private static func openDescriptors(of pid: Int32) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? 0
        }

        @Test func underTooLowADescriptorLimitTheDaemonDoesNotStart() async throws {
            let error = await #expect(throws: DaemonExited.self) {
                try await DaemonProcess(
                    name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(), descriptorLimit: 100)
            }
            #expect(error?.log.contains("the descriptor limit is 100: hexd needs at least 128") == true)
        }

        @Test func unfinishedLinesStayWithinTheBudget() async throws {
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--partial-line-budget", String(8 << 20), "--log-level", "warning"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let before = try #require(ProcessFigures.residentBytes(of: daemon.pid))
            // 100 hosts each holding 1 MiB of a line: 100 MiB asked for, 8 MiB allowed.
            let holders = ConnectionSwarm(
                count: 100, port: port, sources: loopbackHosts(100, network: 3),
                behaviour: .partialLine(bytes: 1 << 20),
                reconnectDelay: .seconds(60))
            try await waitUntil("the budget cuts the largest holders", timeout: .seconds(30)) {
                holders.closedByPeer >= 80
            }
            let during = try #require(ProcessFigures.residentBytes(of: daemon.pid))
            try await HonestSender.store("still served", to: port)
            await holders.stop()
            #expect(holders.timedOut == 0, "the daemon took every byte it was sent, or closed the connection")
            let counts = try await daemon.hexctlJSON(StatusReport.self, ["status"]).connections
            let cut = try #require(counts?.cutOffForPartialLines)
            #expect(cut >= 80, "the budget, nothing else, closed the holders: \(cut) cut off")
            // 8 MiB of lines held, plus the reading buffers of connections being cut (6-8 MiB seen).
            #expect(during - before < 24 << 20, "RSS grew \((during - before) >> 20) MiB for an 8 MiB budget")
            #expect(daemon.log.contains("cut off"))
        }

        @Test func aBeaconFloodLeavesTheTableAtItsCapAndKeepsKnownPeers() async throws {
            let discoveryPort = try DaemonProcess.freeDiscoveryPort()
            let target = try await DaemonProcess(
                name: "Target", discoveryPort: discoveryPort,
                extraArguments: ["--max-peers", "64", "--log-level", "info"])
            // Announcing every second, the friend is lost only after three seconds unheard: the
            // kernel drops some of its beacons while the flood fills the socket's buffer, and
            // what is tested here is the table's cap, not the expiry.
            let friend = try await DaemonProcess(name: "Friend", discoveryPort: discoveryPort, interval: 1)
            defer { withExtendedLifetime(friend) {} }
            try await waitUntil("the target lists its friend", timeout: .seconds(10)) {
                try await target.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Friend" }
            }
            #expect(try await target.hexctl(["send", "--to", "Friend", "https://example.com"]).status == 0)
            // 20,000 invented peers from 40 hosts.
            let sent = try await BeaconFlood.send(20_000, to: discoveryPort, from: loopbackHosts(40, network: 4))
            #expect(sent > 19_000)
            try await waitUntil("the flood is read", timeout: .seconds(10)) {
                try await target.hexctlJSON(StatusReportShape.self, ["status"]).peers == 64
            }
            let peers = try await target.hexctlJSONLines(PeerInfo.self, ["peers"])
            #expect(peers.count == 64)
            #expect(
                peers.contains { $0.name == "Friend" },
                "a peer hexes were exchanged with outranks the strangers: \(target.log)")
            #expect(
                try await target.hexctl(["send", "--to", "Friend", "https://example.org"]).status == 0,
                "and is still reachable by name")
            #expect(target.log.contains("the peer table is full"))
        }
    }
}

/// What `hexctl status --json` says of the daemon's port and its carriers' ports.
private struct StatusWithCarriers: Decodable {
    struct Carrier: Decodable {
        let kind: String
        let port: UInt16?
    }
    let tcpPort: UInt16
    let carriers: [Carrier]
}
