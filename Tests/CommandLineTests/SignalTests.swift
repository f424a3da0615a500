import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// SIGTERM and SIGINT stop hexd cleanly, every time: they are caught, never ignored (an ignored
    /// one that a dispatch signal source was to see was lost now and then, and the daemon never
    /// stopped), and what hexd runs gets them back as any program has them.
    @Suite struct SignalTests {
        /// The bits of SIGINT (2) and SIGTERM (15) in `/proc`'s signal masks.
        private static let termination: UInt64 = 1 << (2 - 1) | 1 << (15 - 1)

        /// A `/proc/…/status` mask field (`SigBlk`, `SigIgn`) of `status`.
        private static func mask(_ field: String, in status: String) -> UInt64? {
            status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
                .flatMap { UInt64($0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
        }

        @Test func hexdCatchesTerminationSignalsAndStopsCleanlyOnThem() async throws {
            for signal in [SIGTERM, SIGINT] {
                let daemon = try await DaemonProcess(
                    name: "Caught", discoveryPort: try DaemonProcess.freeDiscoveryPort())
                let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
                let caught = try #require(Self.mask("SigCgt", in: status))
                let ignored = try #require(Self.mask("SigIgn", in: status))
                #expect(caught & Self.termination == Self.termination, "caught: \(String(caught, radix: 16))")
                #expect(ignored & Self.termination == 0, "ignored: \(String(ignored, radix: 16))")
                for _ in 0..<3 { kill(daemon.pid, signal) }
                try await waitUntil("signal \(signal) stops hexd", timeout: .seconds(20)) { !daemon.isRunning }
                #expect(daemon.stop() == 0, "signal \(signal) stops it cleanly, however many came")
                let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
                #expect(daemon.log.contains("\(name): stopping") && daemon.log.contains("stopped"), "\(daemon.log)")
            }
        }

        /// The on-receive command starts with no signal blocked or ignored, as any program does.
        @Test func theOnReceiveCommandGetsSignalsAsAFreshProcess() async throws {
            let work = try TemporaryDirectory()
            let hook = work.file("hook.sh")
            // `exec`: grep reads its own mask, inherited from the shell as hexd started it, never the
            // shell's while it waits for a child (dash blocks SIGINT and SIGTERM then).
            try "#!/bin/sh\ncat >/dev/null\nexec grep -E '^Sig(Blk|Ign):' /proc/self/status > \"$1\"\n".write(
                toFile: hook, atomically: true, encoding: .utf8)
            #expect(chmod(hook, 0o700) == 0)
            let daemon = try await DaemonProcess(
                name: "Hooked", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--on-receive", "\(hook) \(work.file("signals"))"])
            let port = try await daemon.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let store = Envelope.store(
                HexJM(senderName: "Ada", hexDescription: "signals", hexColor: "#FF0000", links: []),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
            _ = try await exchange([store], port: port, as: nil)
            try await waitUntil("the command wrote its signals", timeout: .seconds(10)) {
                ((try? String(contentsOfFile: work.file("signals"), encoding: .utf8)) ?? "").contains("SigIgn")
            }
            let status = try String(contentsOfFile: work.file("signals"), encoding: .utf8)
            // hexd ignores SIGPIPE (a peer gone mid-write is an error, not its death); its command does not.
            let pipe: UInt64 = 1 << (13 - 1)
            #expect(Self.mask("SigBlk", in: status).map { $0 & Self.termination } == 0, "\(status)")
            #expect(Self.mask("SigIgn", in: status).map { $0 & (Self.termination | pipe) } == 0, "\(status)")
        }
    }
}
