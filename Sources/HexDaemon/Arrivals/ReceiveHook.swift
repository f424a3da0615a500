import Glibc
import HexCarrier
import HexCommandLine
import HexKit
import HexNet

/// Runs the user's command for each hex stored (`hexd --on-receive`), never through a shell:
/// the command's words are the user's, and what a peer sent reaches it only as data, the hex as
/// one JSON object on standard input (the control API's form) and `HEX_ID`, `HEX_SENDER_ID`,
/// `HEX_SENDER_NAME`, `HEX_TRUST` in its environment. At most `ReceiveHookSettings.concurrency`
/// run at once, each stopped with its process group at the timeout; how each ended is logged.
/// Hexes arriving faster than the commands end wait, at most `queueLimit` of them; past that
/// they are skipped and counted in the log.
struct ReceiveHook: DaemonService {
    let words: [String]
    let settings: ReceiveHookSettings
    /// What arrives, subscribed to before the daemon takes its first envelope.
    let arrivals: AsyncStream<Arrival>
    /// Where each command's standard input is written (0600, removed once it ended).
    let spool: String
    let logger: Logger

    static let queueLimit = 256

    func run() async {
        let (queue, continuation) = AsyncStream.makeStream(
            of: Hex.self,
            bufferingPolicy: .bufferingOldest(Self.queueLimit))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var skipped = 0
                for await case .hex(let hex) in arrivals {
                    guard case .dropped = continuation.yield(hex) else { continue }
                    skipped += 1
                    logger.limited(
                        "on-receive skipped", .warning,
                        "\(Self.queueLimit) hexes wait for the command already; "
                            + "skipped hex \(hex.id.uppercaseText) (\(skipped) in all)")
                }
                continuation.finish()
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { commands in
                    var running = 0
                    for await hex in queue {
                        if running == settings.concurrency {
                            await commands.next()
                            running -= 1
                        }
                        commands.addTask { await runCommand(for: hex) }
                        running += 1
                    }
                }
            }
        }
    }

    /// Runs the command for `hex`, as it was stored (whatever became of it since).
    private func runCommand(for hex: Hex) async {
        let input = spool + "/" + hex.id.uppercaseText + ".json"
        defer { unlink(input) }
        guard let json = try? Self.input(for: hex), Self.write(json, to: input) else {
            logger.warning("cannot write hex \(hex.id.uppercaseText) for the command in \(spool)")
            return
        }
        let environment = [
            "HEX_ID": hex.id.uppercaseText, "HEX_SENDER_ID": hex.senderUUID,
            "HEX_SENDER_NAME": hex.senderName, "HEX_TRUST": hex.senderTrust?.rawValue ?? "",
        ]
        let label = "hex \(hex.id.uppercaseText)"
        let result: ChildProcess.Result
        do {
            result = try await ChildProcess.run(
                words, timeout: settings.timeout, outputLimit: 4_096,
                standardInput: input, environment: environment)
        } catch is CancellationError {
            return
        } catch {
            logger.warning("\(label): \(error)")
            return
        }
        let errors = result.errorLine(tail: true)
        let tail = errors.isEmpty ? "" : "; it said: \(errors)"
        if result.timedOut {
            logger.warning("\(label): stopped after \(settings.timeout)\(tail)")
        } else if let code = result.exitCode, code == 0 {
            logger.info("\(label): done\(tail)")
        } else {
            logger.warning("\(label): " + (result.exitCode.map { "exited with \($0)" } ?? "killed by a signal") + tail)
        }
    }

    /// Writes `bytes` to a new file at `path`, readable by this user alone.
    private static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }
}
