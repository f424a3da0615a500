import HexCommandLine
import HexHarness
import HexKit
import HexTestSupport
import Testing

@testable import HexCarrier
@testable import HexDaemon

@Suite(.timeLimit(.minutes(5))) struct LinkProviderTests {
    /// A link command for the tests: prints a link, fails, hangs (with a grandchild holding its
    /// output open), or prints nothing, depending on the file's name.
    static func script(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("linker.sh")
        let script = """
            #!/bin/sh
            case "$1" in
              *fail*) echo "quota exceeded for $1" >&2; exit 3;;
              *hang*) sleep 30; echo "too late";;
              *silent*) exit 0;;
              *) echo "https://cloud.example/s/$(basename "$1")"; echo "a second line is ignored";;
            esac
            """
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755]))
        return path
    }

    private func provider(_ directory: TemporaryDirectory, timeout: Duration = .seconds(5)) throws
        -> CommandLinkProvider
    {
        // Through sh: a script just written can be "busy" for exec while a concurrently spawned
        // process (another test's) still holds the writer's descriptor.
        CommandLinkProvider(
            template: "/bin/sh \(try Self.script(in: directory)) {path}", service: .dropbox, timeout: timeout,
            concurrency: 2)
    }

    @Test func theFirstLineTheCommandPrintsIsTheLink() async throws {
        let directory = try TemporaryDirectory()
        #expect(
            try await provider(directory).link(for: "/data/report 2026.pdf", to: nil)
                == "https://cloud.example/s/report 2026.pdf")
    }

    @Test func aFailingCommandCarriesItsStandardError() async throws {
        let directory = try TemporaryDirectory()
        await #expect { try await provider(directory).link(for: "/data/fail.txt", to: nil) } throws: {
            "\($0)".contains("exited with 3: quota exceeded for /data/fail.txt")
        }
        await #expect { try await provider(directory).link(for: "/data/silent.txt", to: nil) } throws: {
            "\($0)".contains("printed no link")
        }
    }

    @Test func aHangingCommandIsStoppedWithItsChildrenAtTheTimeout() async throws {
        let directory = try TemporaryDirectory()
        let start = ContinuousClock.now
        await #expect {
            try await provider(directory, timeout: .milliseconds(500)).link(for: "/data/hang.txt", to: nil)
        } throws: {
            "\($0)".contains("no answer within")
        }
        // Bounded well below the script's 30 s (and loosely: a loaded machine is slow to reap): the grandchild
        // `sleep` did not hold the daemon.
        #expect(ContinuousClock.now - start < .seconds(20))
    }

    @Test func aFileNameCannotInjectACommand() async throws {
        let directory = try TemporaryDirectory()
        let marker = directory.file("injected")
        let hostile = "/data/x; touch \(marker); $(touch \(marker)) `touch \(marker)`"
        let link = try await provider(directory).link(for: hostile, to: nil)
        #expect(link.hasPrefix("https://cloud.example/s/"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aMissingCommandIsAClearError() async throws {
        let provider = CommandLinkProvider(
            template: "/nonexistent/tool {path}", service: .unknown, timeout: .seconds(5), concurrency: 1)
        await #expect { try await provider.link(for: "/x", to: nil) } throws: { "\($0)".contains("/nonexistent/tool") }
    }

    @Test func theConcurrencyLimitHolds() async throws {
        let directory = try TemporaryDirectory()
        let counter = directory.file("counter.sh")
        // Each run logs its start and end; the log shows how many ran at once. Run N waits until
        // run N+1 has started (at most 3 s), so runs overlap as far as the limit lets them, on
        // any machine: with a limit of 3, three would be seen at once.
        let script = """
            #!/bin/sh
            d=\(directory.path)
            echo start >> $d/log
            n=$(grep -c start $d/log); i=0
            while [ "$(grep -c start $d/log)" -le "$n" ] && [ "$n" -lt 6 ] && [ $i -lt 300 ]; do
                sleep 0.01; i=$((i + 1))
            done
            echo end >> $d/log
            echo "https://x.example/$(basename "$1")"
            """
        #expect(
            FileManager.default.createFile(
                atPath: counter, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755]))
        let provider = CommandLinkProvider(
            template: "/bin/sh \(counter) {path}", service: .unknown, timeout: .seconds(10), concurrency: 2)
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<6 { group.addTask { try await provider.link(for: "/f\(index)", to: nil) } }
            for try await _ in group {}
        }
        var active = 0
        var most = 0
        let log = try String(contentsOfFile: directory.file("log"), encoding: .utf8)
        for line in log.split(separator: "\n") {
            active += line == "start" ? 1 : -1
            most = max(most, active)
        }
        #expect(most == 2)
    }

    /// Hundreds of commands back to back, four at a time: their pipes and processes come and go
    /// while others are spawned (this once crashed the event loop). Bounded: 400 short commands.
    @Test func manyCommandsInARowAreAllAnswered() async throws {
        let provider = CommandLinkProvider(
            template: "/bin/echo https://x.example/{path}", service: .unknown, timeout: .seconds(10), concurrency: 4)
        let links = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<400 { group.addTask { try await provider.link(for: "f\(index)", to: nil) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(links == Set((0..<400).map { "https://x.example/f\($0)" }))
    }

    @Test func fileAndURLProvidersCheckTheirInput() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("my notes.txt")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        #expect(try await FileLinkProvider().link(for: file, to: nil) == "file://" + directory.path + "/my%20notes.txt")
        #expect(
            try await FileLinkProvider().link(for: "file://" + directory.path + "/my%20notes.txt", to: nil)
                == "file://" + directory.path + "/my%20notes.txt")
        await #expect { try await FileLinkProvider().link(for: directory.file("missing"), to: nil) } throws: {
            "\($0)".contains("does not exist")
        }
        await #expect { try await FileLinkProvider().link(for: "relative.txt", to: nil) } throws: {
            "\($0)".contains("not an absolute path")
        }
        #expect(
            try await URLLinkProvider().link(for: "https://example.com/a?b=c", to: nil)
                == "https://example.com/a?b=c")
        for bad in ["example.com", "https://", "not a url", ""] {
            await #expect(throws: LinkProviderError.self) { try await URLLinkProvider().link(for: bad, to: nil) }
        }
    }

    /// The share path's deadline: past the gather timeout the query fails naming a file still
    /// waiting, its commands are stopped, and the registry is empty.
    @Test func aShareThatRunsPastItsTimeoutFailsAndLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        var links = LinkSettings()
        links.command = "/bin/sh \(try Self.script(in: directory)) {path}"
        let share = ShareService(links: links, grants: nil, ownerID: "", events: EventLog())
        await #expect(
            throws: ShareError.linkFailed(
                path: "/data/hang.txt", reason: "no answer within 0.3 seconds (1 of 1 missing)")
        ) {
            try await share.links(
                for: ["/data/hang.txt"], query: UUID(), provider: nil, audience: .myHexlist,
                timeout: .milliseconds(300))
        }
        #expect(await share.registry.inFlight.isEmpty)
    }

    /// A share whose task is cancelled (the client left) ends as cancelled and leaves the registry.
    @Test func aCancelledShareEndsAndLeavesTheRegistry() async throws {
        let directory = try TemporaryDirectory()
        var links = LinkSettings()
        links.command = "/bin/sh \(try Self.script(in: directory)) {path}"
        let share = ShareService(links: links, grants: nil, ownerID: "", events: EventLog())
        let task = Task {
            try await share.links(
                for: ["/data/hang.txt"], query: UUID(), provider: nil, audience: .myHexlist,
                timeout: .seconds(60))
        }
        for _ in 0..<400 where await share.registry.inFlight.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await #expect(throws: ShareError.cancelled) { try await task.value }
        #expect(await share.registry.inFlight.isEmpty)
    }
}
