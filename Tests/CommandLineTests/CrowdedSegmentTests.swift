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
            var started: [DaemonProcess] = []
            for index in 0..<Self.daemons {
                started.append(try await DaemonProcess(name: "crowd\(index)", discoveryPort: port,
                                                       interval: Self.interval))
            }
            let crowd = started
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
            // Steady state: a daemon's beacons are still all read (none dropped over the limits).
            let before = try await crowd[0].hexctlJSON(StatusReport.self, ["status"]).datagramsRateLimited
            try await Task.sleep(for: .seconds(3 * Self.interval))
            let status = try await crowd[0].hexctlJSON(StatusReport.self, ["status"])
            #expect(status.peers == Self.daemons - 1)
            #expect(status.datagramsRateLimited == before, "nothing dropped at steady state")
        }
    }
}
