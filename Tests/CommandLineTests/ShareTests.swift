import Foundation
import HexControl
import HexHarness
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// `hexctl share` against real daemons whose link provider is a real command.
    @Suite struct ShareTests {
        /// A link command: prints a link after `delay` seconds, or fails for a file named *fail*.
        /// A link command that prints a link for each file, or fails for a file named `fail`.
        /// - Parameter holding: every run but the first (whichever file the daemon starts with: `mkdir`
        ///   is atomic) waits, at most 30 s, until a file named `release` appears in `directory`, so
        ///   a share stays in flight for as long as a test needs.
        static func linker(in directory: TemporaryDirectory, holding: Bool = false) throws -> String {
            let path = directory.file("linker.sh")
            let wait =
                "i=0; while [ ! -e \(directory.file("release")) ] && [ $i -lt 300 ]; "
                + "do sleep 0.1; i=$((i + 1)); done"
            let hold = holding ? "mkdir \(directory.file("first")) 2>/dev/null || { \(wait); }" : ""
            let script = """
                #!/bin/sh
                \(hold)
                case "$1" in
                  *fail*) echo "no permission to share $1" >&2; exit 2;;
                  *) echo "https://cloud.example/s/$(basename "$1")";;
                esac
                """
            #expect(FileManager.default.createFile(atPath: path, contents: Data(script.utf8)))
            return "/bin/sh \(path) {path}"
        }

        private func files(_ names: [String], in directory: TemporaryDirectory) -> [String] {
            names.map { name in
                let path = directory.file(name)
                _ = FileManager.default.createFile(atPath: path, contents: Data(name.utf8))
                return path
            }
        }

        @Test func sharedFilesReachThePeerAsLinksInSelectionOrder() async throws {
            let work = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: port,
                extraArguments: ["--link-command", try Self.linker(in: work), "--link-service", "Dropbox"])
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            let paths = files((1...12).map { "file-\($0).pdf" }.reversed(), in: work)

            let result = try await ada.hexctl(
                ["share", "--to", "grace", "--provider", "command", "-d", "Q3", "--json"]
                    + paths)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.isEmpty, "no progress output in --json mode")
            let hex = try #require(try await grace.newestInboxHex())
            #expect(hex.hexDescription == "Q3" && hex.senderName == "Ada")
            #expect(hex.links.map(\.linkDescription) == (1...12).map { "file-\($0).pdf" }.reversed())
            #expect(hex.links.map(\.url) == (1...12).map { "https://cloud.example/s/file-\($0).pdf" }.reversed())
            #expect(hex.links.allSatisfy { $0.service == .dropbox })

            let events = try await ada.hexctl(["watch", "--until", "queryFinished", "--timeout", "20"]).standardOutput
            #expect(
                events.contains("queryProgress") && events.contains("\"12/12\"")
                    && events.contains("queryFinished"),
                "\(events)")
        }

        @Test func aFailingFileSendsAndSavesNothingAndIsNamed() async throws {
            let work = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: port, extraArguments: ["--link-command", try Self.linker(in: work)])
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            let paths = files(["a.txt", "fail.txt", "b.txt"], in: work)

            let sent = try await ada.hexctl(["share", "--to", "Grace", "--provider", "command"] + paths)
            #expect(sent.status == 1)
            #expect(
                sent.standardError.contains("\(work.path)/fail.txt")
                    && sent.standardError.contains("no permission to share"))
            #expect(try await grace.hexctlJSONLines(HexSummary.self, ["inbox"]).isEmpty, "nothing half-sent")

            let saved = try await ada.hexctl(["share", "--save"] + paths)
            #expect(saved.status == 1)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).isEmpty, "nothing half-saved")

            let missing = try await ada.hexctl([
                "share", "--save", "--provider", "file", work.file("a.txt"), work.file("nope.txt"),
            ])
            #expect(missing.status == 1 && missing.standardError.contains("\(work.path)/nope.txt does not exist"))
            #expect(
                try await ada.hexctl(["share", "--save", "--provider", "dropbox-api", work.file("a.txt")]).status == 64)
            #expect(try await ada.hexctl(["share", work.file("a.txt")]).status == 64, "--to or --save is required")
        }

        @Test func aShareInFlightIsListedAndCanBeCancelled() async throws {
            let work = try TemporaryDirectory()
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: [
                    "--link-command", try Self.linker(in: work, holding: true),
                    "--link-concurrency", "1",
                ])
            let paths = files(["one.txt", "two.txt", "three.txt", "four.txt"], in: work)
            let share = Task.detached { try await ada.hexctl(["share", "--save"] + paths, timeout: .seconds(30)) }

            var inFlight: [QueryRegistry.Progress] = []
            // The first file is answered at once; the next one's command waits for a release that never comes.
            try await waitUntil("the share is in flight with one link", timeout: .seconds(20)) {
                inFlight = try await ada.hexctlJSON([QueryRegistry.Progress].self, ["queries"])
                return inFlight.first.map { $0.answered >= 1 } ?? false
            }
            let query = try #require(inFlight.first)
            #expect(query.total == 4 && query.kind == .shareLinks && query.answered == 1 && query.waiting.count == 3)
            #expect(
                try await ada.hexctl(["cancel", String(query.id.uuidString.lowercased().prefix(8))]).status == 0,
                "a unique prefix, any case")

            let result = try await share.value
            #expect(result.status == 1 && result.standardError.contains("cancelled"))
            #expect(try await ada.hexctlJSON([QueryRegistry.Progress].self, ["queries"]).isEmpty)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).isEmpty)
            #expect(try await ada.hexctl(["cancel", query.id.uuidString]).status == 1, "it is gone")
        }

        /// Ctrl-C on `hexctl share` (here: hexctl is terminated) cancels the share in the daemon:
        /// its link commands are stopped, and nothing is saved.
        @Test func aClientThatLeavesCancelsItsShare() async throws {
            let work = try TemporaryDirectory()
            let script = work.file("slow-linker.sh")
            // Each run leaves its pid, then sleeps in place (exec) far longer than the test waits.
            #expect(
                FileManager.default.createFile(
                    atPath: script,
                    contents: Data(
                        """
                        #!/bin/sh
                        echo $$ > "\(work.path)/pid-$(basename "$1")"
                        exec sleep 60
                        """.utf8)))
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--link-command", "/bin/sh \(script) {path}"])
            let paths = files(["one.txt", "two.txt"], in: work)
            let share = Task.detached { try await ada.hexctl(["share", "--save"] + paths, timeout: .seconds(60)) }
            var pids: [Int32] = []
            try await waitUntil("both link commands run", timeout: .seconds(10)) {
                pids = ["one.txt", "two.txt"].compactMap { name in
                    (try? String(contentsOfFile: work.file("pid-" + name), encoding: .utf8)).flatMap {
                        Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                }
                return pids.count == 2
            }
            share.cancel()
            let result = try await share.value
            #expect(result.status != 0, "hexctl was stopped")
            try await waitUntil("the link commands are stopped", timeout: .seconds(10)) {
                pids.allSatisfy { kill($0, 0) != 0 }
            }
            try await waitUntil("the query is gone", timeout: .seconds(5)) {
                try await ada.hexctlJSON([QueryRegistry.Progress].self, ["queries"]).isEmpty
            }
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).isEmpty, "nothing saved")
        }
    }
}
