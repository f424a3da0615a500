import Foundation
import HexControl
import HexTestSupport
import Testing

extension ProcessTests {
    /// Many daemons on one host: every beacon comes from 127.0.0.1 and the one shared discovery
    /// port, so only a budget per sender lets them all find each other.
    @Suite struct CrowdedSegmentTests {
        static let daemons = 30
        static let interval = 1.0

        @Test func thirtyDaemonsOnOneHostAllListEachOther() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            // Started side by side, as a crowd comes up: each start waits for its daemon to answer.
            let crowd = try await withThrowingTaskGroup(of: DaemonProcess.self) { group in
                for index in 0..<Self.daemons {
                    group.addTask {
                        try await DaemonProcess(name: "crowd\(index)", discoveryPort: port, interval: Self.interval)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let lastStarted = ContinuousClock.now
            var short: [String] = []
            try await waitUntil("every daemon lists the \(Self.daemons - 1) others", timeout: .seconds(30)) {
                short = []
                for daemon in crowd {
                    let listed = try await daemon.hexctlJSON(StatusReport.self, ["status"]).peers
                    if listed != Self.daemons - 1 { short.append("\(daemon.name): \(listed)") }
                }
                return short.isEmpty
            }
            let converged = ContinuousClock.now - lastStarted
            print("crowd: \(Self.daemons) daemons on one host listed each other \(converged) after the last started")
            // Steady state: 29 peers make each daemon announce every 29/16 intervals; every beacon is
            // still read (none dropped over the limits), and no peer was ever lost meanwhile.
            let before = try await crowd[0].hexctlJSON(StatusReport.self, ["status"]).datagramsRateLimited
            try await Task.sleep(for: .seconds(4 * Self.interval))
            let status = try await crowd[0].hexctlJSON(StatusReport.self, ["status"])
            #expect(status.peers == Self.daemons - 1)
            #expect(status.datagramsRateLimited == before, "nothing dropped at steady state")
            let crowded = Self.interval * Double(Self.daemons - 1) / 16
            #expect(abs((status.announceInterval ?? 0) - crowded) < 0.01, "\(status.announceInterval ?? 0)")
            let losses = try await withThrowingTaskGroup(of: (String, Int32, String).self) { group in
                for daemon in crowd {
                    group.addTask {
                        let watch = ["watch", "--since", "0", "--until", "peerLost", "--timeout", "0.2"]
                        let lost = try await daemon.hexctl(watch)
                        return (daemon.name, lost.status, lost.standardOutput)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (name, status, output) in losses { #expect(status == 75, "\(name) lost a peer: \(output)") }
            // What a lost daemon did meanwhile says whether it fell silent or went unheard.
            let lost = crowd.filter { daemon in losses.contains { $0.2.contains("peerLost \"\(daemon.name)\"") } }
            for daemon in lost.prefix(2) {
                print("crowd: the log of \(daemon.name), lost by a peer:\n\(daemon.log.suffix(30_000))")
            }
        }
    }
}
