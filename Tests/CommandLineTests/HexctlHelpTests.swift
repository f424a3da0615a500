import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexctlHelpTests {
        static let commands = ["status", "peers", "send", "alert", "inbox", "inbox show", "inbox check", "inbox delete", "inbox save", "hexlist",
                               "hexlist add", "hexlist remove", "hexlist move", "hexlist send", "share", "queries", "cancel", "block", "unblock", "blocked", "watch", "raw", "decode"]

        @Test(arguments: commands)
        func everyCommandHasCompleteHelp(_ command: String) async throws {
            let result = try await PackageExecutable.run("hexctl", command.split(separator: " ").map(String.init) + ["--help"])
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix("USAGE: hexctl \(command) "))
            for part in ["--json", "--data-dir", "--help", "EXIT CODES", "69 hexd is not", "75 timeout", "77 rejected"] {
                #expect(result.standardOutput.contains(part), "\(command): \(part)")
            }
        }

        @Test func theOverviewListsEveryCommand() async throws {
            let result = try await PackageExecutable.run("hexctl", ["--help"])
            #expect(result.status == 0)
            for command in Self.commands { #expect(result.standardOutput.contains("\n  " + command + " "), "\(command)") }
        }

        @Test func anUnknownOptionIsAUsageErrorThatPointsToHelp() async throws {
            let result = try await PackageExecutable.run("hexctl", ["inbox", "--sorted"])
            #expect(result.status == 64 && result.standardError == "hexctl: unknown option '--sorted'; see hexctl inbox --help\n")
        }
    }
}
