import Foundation
import HexControl
import HexKit
import HexNet

/// What one hexctl command costs a script, against `/bin/true` started the same way in the same
/// run: the process alone (`--version`), and `status` and `inbox --limit 50` answered by a hexd
/// with a few hexes. Measures the hexctl beside hexbench, or the one `--hexctl` names (the static
/// build `Examples/install.sh` installs is the one users run).
struct StartupBenchmark {
    let runs: Int
    let hexctl: String

    init(runs: Int, hexctl: String?) {
        self.runs = runs
        self.hexctl =
            hexctl
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("hexctl").path
    }

    func run() async throws -> [String] {
        let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port
        let daemon = try BenchDaemon(name: "startup", discoveryPort: discoveryPort, interval: 1)
        _ = try await daemon.waitForStatus()
        let client = try ControlClient(socketPath: daemon.controlPath)
        for index in 0..<20 {
            let draft = HexDraft(description: "kept \(index)", links: [LinkJM(url: "https://example.com/\(index)")])
            guard try await client.request(.hexlistAdd(draft), timeout: .seconds(10)).error == nil else {
                throw BenchFailure("could not save hex \(index)")
            }
        }
        let commands: [(label: String, words: [String])] = [
            ("/bin/true", ["/bin/true"]),
            ("hexctl --version", [hexctl, "--version"]),
            ("hexctl status", [hexctl, "status", "--data-dir", daemon.directory]),
            ("hexctl hexlist --limit 50", [hexctl, "hexlist", "--limit", "50", "--data-dir", daemon.directory]),
        ]
        // Taken in turns, so that the machine's moods fall on every command alike.
        var times = Array(repeating: [Double](), count: commands.count)
        for _ in 0..<runs {
            for (index, command) in commands.enumerated() {
                times[index].append(try await commandTime(command.words))
            }
        }
        withExtendedLifetime(daemon) {}
        let baseline = median(times[0])
        var report = ["hexctl: \(hexctl), each command started \(runs) times (a pidfd tells its end), medians"]
        for (index, command) in commands.enumerated() {
            let ratio =
                index == 0
                ? "the baseline"
                : "\(format(median(times[index]) / baseline))x /bin/true"
                    + (index == 1 || index == 2 ? " (target <= 2x)" : "")
            report.append(
                "  \(command.label): \(format(median(times[index]))) ms, "
                    + "p90 \(format(percentile(times[index], 0.9))) ms, \(ratio)")
        }
        return report
    }
}

/// The wall time of `command`, in milliseconds, from its start to the exit a pidfd reports.
func commandTime(_ command: [String]) async throws -> Double {
    let start = ContinuousClock.now
    let result = try await ChildProcess.run(command, timeout: .seconds(10))
    guard result.exitCode == 0 else { throw BenchFailure("\(command) failed: \(result.standardError)") }
    return milliseconds(ContinuousClock.now - start)
}
