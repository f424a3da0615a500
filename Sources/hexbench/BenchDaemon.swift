// Full Foundation for FileManager and URL: this tool runs real hexd processes.
import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet

/// A hexd process started by the benchmark, stopped when this value goes away.
final class BenchDaemon {
    private let process: SpawnedProcess
    let directory: String
    var controlPath: String { directory + "/hexd.sock" }

    var pid: Int32 { process.pid }

    /// Whether `deinit` removes the data directory: not when it was given (a restart).
    private let ownsDirectory: Bool

    /// - Parameter directory: an earlier daemon's data directory, to restart it; a new one by default.
    init(name: String, discoveryPort: UInt16, interval: Double, extraArguments: [String] = [], directory: String? = nil)
        throws
    {
        ownsDirectory = directory == nil
        self.directory =
            directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "hexbench-\(name)-\(UUID().uuidString.prefix(8))"
            ).path
        let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let arguments =
            [
                "--data-dir", self.directory, "--name", name, "--port", "0",
                "--discovery-port", String(discoveryPort), "--broadcast", "127.255.255.255",
                "--announce-interval", String(interval), "--log-level", "warning",
            ]
            // No page, no notifications, no LocalSend and no KDE Connect unless asked: many daemons
            // run at once, a desktop would show what a benchmark sends, and hexd-to-hexd figures stay
            // comparable with those of daemons before the other protocols.
            + (extraArguments.contains("--web") ? [] : ["--web", "off"])
            + (extraArguments.contains("--notify") ? [] : ["--notify", "off"])
            + (extraArguments.contains("--localsend") ? [] : ["--localsend", "off"])
            + (extraArguments.contains("--kdeconnect") ? [] : ["--kdeconnect", "off"]) + extraArguments
        // Its warnings go where hexbench's own output goes.
        let hexd = binDirectory.appendingPathComponent("hexd").path
        process = try SpawnedProcess(hexd, arguments, standardOutput: 1, standardError: 2)
    }

    deinit {
        if process.isRunning {
            process.send(SIGTERM)
            process.waitBlocking()
        }
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    func kill() {
        process.send(SIGKILL)
        process.waitBlocking()
    }

    /// Stops it with SIGTERM and waits for its end; its directory stays until this value goes.
    func stop() {
        process.send(SIGTERM)
        process.waitBlocking()
    }

    /// Its status, once its control socket answers (at most 20 s).
    func waitForStatus() async throws -> StatusReport {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let status = try? await status() { return status }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchFailure("\(directory) never answered status")
    }

    /// Waits until `count` carriers of other protocols are up (their personas made, their ports
    /// taken), at most 20 s.
    func waitForCarriers(count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await (status().carriers?.count ?? 0) < count {
            guard ContinuousClock.now < deadline else { throw BenchFailure("\(directory): \(count) carriers never up") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func status() async throws -> StatusReport {
        guard
            let status = try await ControlClient(socketPath: controlPath).request(.status, timeout: .seconds(5)).status
        else {
            throw BenchFailure("no status")
        }
        return status
    }

    func waitForPeer(_ name: String) async throws {
        try await poll("\(name) appears") { $0.contains { $0.name == name } }
    }

    func waitForPeers(count: Int) async throws {
        try await poll("\(count) peers are listed") { $0.count >= count }
    }

    func waitForNoPeers() async throws {
        try await poll("the peer leaves") { $0.isEmpty }
    }

    /// Asks for the peer table every 5 ms until `condition` holds (at most 20 s).
    private func poll(_ what: String, _ condition: ([PeerInfo]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            var peers: [PeerInfo] = []
            if let client = try? ControlClient(socketPath: controlPath),
                (try? await client.list(
                    .peers(ListPage()), timeout: .seconds(5), item: { if let peer = $0.peer { peers.append(peer) } }))
                    != nil,
                condition(peers)
            {
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchFailure("timed out waiting until \(what)")
    }
}
