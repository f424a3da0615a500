// Full Foundation for String(format:): this tool runs real hexd processes.
import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet

/// A hexd with its default budgets under the attacks of the hostile-network issue, each figure
/// beside a baseline taken from the same daemon in the same run:
/// - honest send -> Ack latency while 1,000 connections trickle bytes and 1,000 sit idle (the
///   attackers run in a process of their own), with the default connection cap and with 512;
/// - resident memory while 500 connections each hold 1 MiB of an unfinished line;
/// - a flood of 100,000 beacons of invented peers: the peer table, memory, CPU, and how long
///   until the daemon's idle CPU is back to its baseline.
struct HostileBenchmark {
    let sends: Int
    let scale: Scale

    func run() async throws -> [String] {
        var report = ["hostile: one hexd with its default budgets, attackers on other loopback addresses"]
        let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port
        let daemon = try BenchDaemon(name: "target", discoveryPort: discoveryPort, interval: 2)
        try await waitForStatus(daemon)
        let port = try await daemon.status().tcpPort
        let idleSpan = Duration.seconds(scale.pick(5, quick: 1))
        let idleBaseline = try await ProcessFigures.cpuShare(of: daemon.pid, over: idleSpan) ?? 0
        let rssBaseline = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
        report.append("  idle baseline: CPU \(percent(idleBaseline)) of a core, RSS \(mebibytes(rssBaseline))")

        // Slowloris: honest latency against the baseline, with the default connection cap (the
        // attackers all fit) and with a cap of 512 (each newcomer closes the stalest connection).
        let baseline = try await honestLatencies(port: port, label: "baseline")
        report.append("  honest send -> Ack, \(sends) sends one after another on fresh connections:")
        report.append(
            "    baseline:                                   p50 \(format(median(baseline))) ms, "
                + "p99 \(format(percentile(baseline, 0.99))) ms"
        )
        for cap in [nil, 512] as [Int?] {
            let target = try cap.map { cap in
                try BenchDaemon(
                    name: "capped", discoveryPort: 0, interval: 2, extraArguments: ["--max-connections", String(cap)])
            }
            if let target { try await waitForStatus(target) }
            let targetPID = target?.pid ?? daemon.pid
            let targetPort = try await target?.status().tcpPort ?? port
            let swarm = try startSwarm(port: targetPort)
            try await Task.sleep(for: .seconds(scale.pick(5, quick: 1)))
            let attackSpan = Duration.seconds(scale.pick(3, quick: 1))
            let attackCPU = try await ProcessFigures.cpuShare(of: targetPID, over: attackSpan) ?? 0
            let attackRSS = ProcessFigures.residentBytes(of: targetPID) ?? 0
            let attacked = try await honestLatencies(port: targetPort, label: "attacked")
            let attackers = stopSwarm(swarm)
            report.append(
                "    \(swarmSize) trickling + \(swarmSize) idle connections, "
                    + "\(cap.map { "--max-connections \($0)" } ?? "default cap (4096)"):")
            report.append(
                "                                                p50 \(format(median(attacked))) ms, "
                    + "p99 \(format(percentile(attacked, 0.99))) ms "
                    + "(p99 / baseline p99 = \(format(percentile(attacked, 0.99) / percentile(baseline, 0.99)))); "
                    + "all \(attacked.count) acked"
            )
            report.append("      attackers (another process, reconnecting 1 s after each close): \(attackers)")
            report.append(
                "      the daemon under attack alone: CPU \(percent(attackCPU)) of a core, RSS \(mebibytes(attackRSS))")
        }

        // Partial lines: memory against the budget.
        let beforeHolders = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
        let holderCount = scale.pick(500, quick: 30)
        let holders = ConnectionSwarm(
            count: holderCount, port: port, sources: loopbackHosts(50, network: 13),
            behaviour: .partialLine(bytes: 1 << 20),
            reconnectDelay: .seconds(1))
        var peak = beforeHolders
        for _ in 0..<scale.pick(100, quick: 10) {
            try await Task.sleep(for: .milliseconds(100))
            peak = max(peak, ProcessFigures.residentBytes(of: daemon.pid) ?? 0)
        }
        let cut = holders.closedByPeer
        try await HonestSender.store("during partial lines", to: port)
        await holders.stop()
        report.append(
            "  \(holderCount) connections each holding 1 MiB of an unfinished line "
                + "(\(holderCount) MiB asked, "
                + "budget 64 MiB), \(scale.pick(10, quick: 1)) s:")
        report.append(
            "    RSS before \(mebibytes(beforeHolders)), peak \(mebibytes(peak)) "
                + "(+\(mebibytes(peak - beforeHolders))); "
                + "\(cut) holders cut off; an honest send was acked")

        // Beacon flood: table, memory, CPU, recovery.
        let cpuBeforeFlood = ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0
        let floodStart = ContinuousClock.now
        let sent = try await BeaconFlood.send(
            scale.pick(100_000, quick: 2_000), to: discoveryPort,
            from: loopbackHosts(200, network: 14))
        let floodSeconds = (ContinuousClock.now - floodStart).inSeconds
        let floodCPU = ((ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0) - cpuBeforeFlood) / floodSeconds
        let status = try await daemon.status()
        let rssAfterFlood = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
        var recovery: Double?
        var lastIdle = 0.0
        let recoveryStart = ContinuousClock.now
        while recovery == nil && ContinuousClock.now - recoveryStart < .seconds(60) {
            lastIdle = try await ProcessFigures.cpuShare(of: daemon.pid, over: .seconds(2)) ?? 0
            if lastIdle <= idleBaseline + 0.02 { recovery = (ContinuousClock.now - recoveryStart).inSeconds }
        }
        report.append("  \(sent) beacons of invented peers from 200 hosts in \(format(floodSeconds)) s:")
        report.append(
            "    peer table \(status.peers) (cap 1024), \(status.peersEvicted) dropped to make room, "
                + "\(status.datagramsRateLimited) of the \(status.datagramsReceived) datagrams received "
                + "over the beacon budgets")
        report.append(
            "    CPU during the flood \(percent(floodCPU)) of a core; "
                + "RSS after \(mebibytes(rssAfterFlood)) (baseline \(mebibytes(rssBaseline)))"
        )
        report.append(
            "    idle CPU back to baseline (\(percent(idleBaseline)) + 2 points): "
                + (recovery.map { "after \(format($0)) s (\(percent(lastIdle)))" }
                    ?? "NOT within 60 s (\(percent(lastIdle)))"))
        return report
    }

    /// The attackers' process: trickling and idle connections from other loopback hosts, each
    /// opening a new connection a second after the daemon closes one, until SIGINT or the time
    /// is up; then one line of counts on standard output.
    static func runSwarm(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4, let port = UInt16(arguments[0]), let trickling = Int(arguments[1]),
            let idle = Int(arguments[2]),
            let seconds = Int(arguments[3])
        else { return 64 }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        interrupt.setEventHandler { stop.yield() }
        interrupt.resume()
        let tricklers = ConnectionSwarm(
            count: trickling, port: port, sources: loopbackHosts(100, network: 11),
            behaviour: .trickle(every: .seconds(1)),
            reconnectDelay: .seconds(1))
        let idlers = ConnectionSwarm(
            count: idle, port: port, sources: loopbackHosts(100, network: 12), behaviour: .idle,
            reconnectDelay: .seconds(1))
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            stop.yield()
        }
        for await _ in stopped { break }
        timer.cancel()
        let open = tricklers.open + idlers.open
        await tricklers.stop()
        await idlers.stop()
        print("\(tricklers.connected + idlers.connected) connections made, \(open) open when stopped")
        return 0
    }

    /// Starts the attackers' process (`hexbench swarm`) against `port`; returns it and the read
    /// end of its standard output.
    private func startSwarm(port: UInt16) throws -> (SpawnedProcess, Int32) {
        let output = try SpawnPipe()
        defer { close(output.write) }
        let swarm = try SpawnedProcess(
            CommandLine.arguments[0],
            ["swarm", String(port), String(swarmSize), String(swarmSize), "600"],
            standardOutput: output.write, standardError: 2)
        return (swarm, output.read)
    }

    /// Trickling connections, and as many idle ones, in the attackers' process.
    private var swarmSize: Int { scale.pick(1_000, quick: 50) }

    /// Stops the attackers' process and returns what it says of its connections.
    private func stopSwarm(_ swarm: (SpawnedProcess, Int32)) -> String {
        swarm.0.send(SIGINT)
        return outputOnExit(of: swarm.0, reading: swarm.1)
    }

    /// `sends` honest Stores, one after another, each on a fresh connection: their latencies in ms.
    private func honestLatencies(port: UInt16, label: String) async throws -> [Double] {
        var latencies: [Double] = []
        for index in 0..<sends {
            latencies.append(
                milliseconds(try await HonestSender.store("\(label) \(index)", to: port, timeout: .seconds(10))))
        }
        return latencies
    }

    private func waitForStatus(_ daemon: BenchDaemon) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? await daemon.status()) == nil {
            guard ContinuousClock.now < deadline else { throw BenchFailure("the daemon did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }
}
