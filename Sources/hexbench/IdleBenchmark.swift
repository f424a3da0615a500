import Foundation
import HexHarness
import HexNet

/// What an idle hexd costs the machine: context switches a second (all its threads) and its share
/// of a core, with no peers (Quick Share on, as by default; then LocalSend and KDE Connect on too,
/// every announcement kept on loopback), one, and thirty beaconing at the default interval, against
/// a Python process doing the least such a daemon must (a beacon of the same size broadcast at the
/// same interval, and every datagram on the port read) in the same run.
struct IdleBenchmark {
    let window: Duration
    let crowd: Int
    let scale: Scale

    /// The share of a core an idle hexd with no peers never reaches, debug build or not: a hundred
    /// times the target. Past it the benchmark fails.
    static let spinningShare = 0.05

    init(scale: Scale) {
        self.scale = scale
        window = scale.pick(.seconds(60), quick: .seconds(5))
        crowd = scale.pick(30, quick: 3)
    }

    private struct Cost {
        var switchesPerSecond: Double
        var coreShare: Double
        var datagrams: Int?

        var text: String {
            String(format: "%.1f switches/s, %.3f %% of a core", switchesPerSecond, coreShare * 100)
        }
    }

    func run() async throws -> [String] {
        let interval = 2.0
        var report = ["idle: \(window) per figure, beacons every \(interval) s (the default)"]
        let baselinePort = try DatagramSocket(address: .loopback, port: 0).port
        let baseline = try minimalBeaconer(port: baselinePort, interval: interval)
        defer {
            baseline.send(SIGTERM)
            baseline.waitBlocking()
        }
        try await Task.sleep(for: .seconds(1))
        let floor = try await cost(of: baseline.pid, daemon: nil)
        report.append("idle: a minimal beaconing Python process: \(floor.text)")

        for (peers, everyCarrier) in [(0, false), (0, true), (1, false), (crowd, false)] {
            let port = try DatagramSocket(address: .loopback, port: 0).port
            // The measured daemon with its page and notifier, as by default; the others without.
            let carriers = everyCarrier ? ["--localsend", "on", "--kdeconnect", "on"] : []
            let measured = try BenchDaemon(
                name: "measured", discoveryPort: port, interval: interval,
                extraArguments: ["--web", "127.0.0.1:0", "--notify", "on"] + carriers)
            let others = try (0..<peers).map {
                try BenchDaemon(name: "peer\($0)", discoveryPort: port, interval: interval)
            }
            _ = try await measured.waitForStatus()
            for other in others { _ = try await other.waitForStatus() }
            if peers > 0 { try await measured.waitForPeers(count: peers) }
            // Every carrier's persona is made before the window (a fresh data directory's keys).
            try await measured.waitForCarriers(count: everyCarrier ? 3 : 1)
            // Past the start's burst of queries and answers.
            try await Task.sleep(for: .seconds(interval * 2))
            let cost = try await cost(of: measured.pid, daemon: measured)
            var line =
                "idle: hexd with \(peers) peer\(peers == 1 ? "" : "s")"
                + (everyCarrier ? ", LocalSend and KDE Connect on too" : "") + ": \(cost.text)"
                + String(
                    format: " (%.1fx the Python process's switches)",
                    cost.switchesPerSecond / max(floor.switchesPerSecond, 0.01))
            if let datagrams = cost.datagrams, datagrams > 0 {
                let perBeacon = cost.switchesPerSecond * window.inSeconds / Double(datagrams)
                line += String(format: "; %.2f switches per datagram received (%d)", perBeacon, datagrams)
            }
            report.append(line)
            // Far past any target: a loop that spins (a timer woken by its own tick), not noise.
            if peers == 0, cost.coreShare > Self.spinningShare {
                throw BenchFailure(
                    line + String(format: ": past %.0f %% of a core, a loop spins", Self.spinningShare * 100))
            }
            // The others beacon until here (an optimised build would end them after their last use).
            withExtendedLifetime(others) {}
        }
        report.append(
            "idle: targets: no peers at most 3 switches/s and 0.05 % of a core; with 30 peers at most 2 "
                + "switches per beacon received plus 3 a second")
        return report
    }

    private func cost(of pid: Int32, daemon: BenchDaemon?) async throws -> Cost {
        let before = try await daemon?.status().datagramsReceived
        guard let cpu = ProcessFigures.cpuSeconds(of: pid),
            let switches = try await ProcessFigures.contextSwitches(of: pid, over: window),
            let cpuAfter = ProcessFigures.cpuSeconds(of: pid)
        else { throw BenchFailure("process \(pid) is gone") }
        let after = try await daemon?.status().datagramsReceived
        let seconds = window.inSeconds
        let datagrams = after.flatMap { after in before.map { after - $0 } }
        return Cost(
            switchesPerSecond: Double(switches) / seconds, coreShare: (cpuAfter - cpu) / seconds,
            datagrams: datagrams)
    }

    /// Python broadcasting a beacon-sized datagram every `interval` and reading the port.
    private func minimalBeaconer(port: UInt16, interval: Double) throws -> SpawnedProcess {
        let script = """
            import select, socket, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            s.bind(("0.0.0.0", \(port)))
            beacon = b"x" * 400
            due = time.monotonic()
            while True:
                now = time.monotonic()
                if now >= due:
                    s.sendto(beacon, ("127.255.255.255", \(port)))
                    due = now + \(interval)
                if select.select([s], [], [], due - now)[0]:
                    s.recvfrom(2048)
            """
        return try SpawnedProcess("/usr/bin/env", ["python3", "-c", script])
    }
}
