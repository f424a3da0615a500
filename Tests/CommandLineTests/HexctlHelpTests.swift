import Foundation
import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexctlHelpTests {
        static let commands = ["status", "peers", "send", "alert", "inbox", "inbox show", "inbox check", "inbox delete", "inbox save", "hexlist",
                               "hexlist add", "hexlist remove", "hexlist move", "hexlist send", "share", "queries", "cancel", "block", "unblock", "blocked", "wait", "watch", "raw", "decode"]

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

        @Test(arguments: [
            (["inbox", "shwo", "ID"], "did you mean 'hexctl inbox show'?"),
            (["inbox", "delte", "ID"], "did you mean 'hexctl inbox delete'?"),
            (["hexlist", "frob"], "the commands of hexlist are add, remove, move, send"),
            (["peers", "extra"], "hexctl peers takes no argument, not 'extra'"),
            (["staus"], "did you mean 'status'?"),
            (["--sorted", "status"], "unknown option '--sorted' before the command"),
        ])
        func aMistypedCommandIsAUsageErrorWithAHint(_ words: [String], _ hint: String) async throws {
            let result = try await PackageExecutable.run("hexctl", words)
            #expect(result.status == 64 && result.standardError.contains(hint), "\(words): \(result.standardError)")
            #expect(result.standardOutput.isEmpty, "nothing is listed")
        }

        @Test func globalOptionsGoBeforeOrAfterTheCommand() async throws {
            let directory = try TemporaryDirectory()
            for words in [["--data-dir", directory.path, "status"], ["--json", "--data-dir=\(directory.path)", "status"], ["status", "--data-dir", directory.path]] {
                let result = try await PackageExecutable.run("hexctl", words)
                #expect(result.status == 69 && result.standardError.contains("hexd is not running with the data directory \(directory.path) "), "\(words)")
            }
        }

        @Test func helpNamesACommand() async throws {
            let result = try await PackageExecutable.run("hexctl", ["help", "inbox", "show"])
            #expect(result.status == 0 && result.standardOutput.hasPrefix("USAGE: hexctl inbox show "))
            #expect(try await PackageExecutable.run("hexctl", ["help", "nonsense"]).status == 64)
        }

        @Test func withJSONAnErrorIsOneJSONObjectOnStandardError() async throws {
            let directory = try TemporaryDirectory()
            let result = try await PackageExecutable.run("hexctl", ["--json", "status", "--data-dir", directory.path])
            struct Failure: Decodable {
                struct Body: Decodable { let code: String; let exitCode: Int32; let message: String }
                let error: Body
            }
            let failure = try JSONDecoder().decode(Failure.self, from: Data(result.standardError.utf8))
            #expect(result.status == 69 && failure.error.code == "unavailable" && failure.error.exitCode == 69 && result.standardOutput.isEmpty)
        }
    }
}
