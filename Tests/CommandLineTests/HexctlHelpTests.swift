import Foundation
import HexHarness
import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexctlHelpTests {
        static let commands = [
            "status", "peers", "send", "alert", "inbox", "inbox show", "inbox check", "inbox delete", "inbox save",
            "hexlist", "hexlist add", "hexlist remove", "hexlist move", "hexlist send", "share", "queries", "cancel",
            "block", "unblock", "blocked", "wait", "watch", "raw", "decode", "alerts", "alerts delete", "visibility",
            "fetch", "grants", "revoke",
        ]

        @Test(arguments: commands)
        func everyCommandHasCompleteHelp(_ command: String) async throws {
            let result = try await PackageExecutable.run(
                "hexctl", command.split(separator: " ").map(String.init) + ["--help"])
            #expect(result.status == 0)
            let help = result.standardOutput
            // Wrapping may break a phrase across lines: look for phrases in the text unwrapped.
            let text = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(help.hasPrefix("USAGE: hexctl \(command) "))
            for part in [
                "OPTIONS:", "--json", "--help", "EXIT CODES", "69 hexd is not", "75 not delivered yet", "77 rejected",
            ] {
                #expect(text.contains(part), "\(command): \(part)")
            }
            let usesDaemon = !["raw", "decode"].contains(command)
            #expect(
                help.contains("--data-dir") == usesDaemon, "\(command): --data-dir only where a daemon is talked to")
            let usage = help.prefix { $0 != "\n" }
            let arguments = usage.replacingOccurrences(of: "[<options>]", with: "").replacingOccurrences(
                of: "--to <peer>", with: "")
            #expect(arguments.contains("<") == help.contains("ARGUMENTS:"), "\(command): every argument is explained")
            if ["send", "alert", "hexlist send"].contains(command) {
                #expect(usage.contains("--to <peer>"), "\(command): the usage line shows --to")
            }
            if ["inbox", "hexlist"].contains(command) {
                #expect(help.contains("SUBCOMMANDS:"), "\(command) lists its subcommands")
            }
        }

        @Test func helpWrapsToTheTerminalWidth() async throws {
            for width in [60, 100] {
                let result = try await PackageExecutable.run(
                    "hexctl", ["send", "--help"], environment: ["COLUMNS": String(width)])
                #expect(result.standardOutput.split(separator: "\n").allSatisfy { $0.count <= width }, "width \(width)")
            }
        }

        @Test func theOverviewListsEveryCommand() async throws {
            let result = try await PackageExecutable.run("hexctl", ["--help"])
            #expect(result.status == 0)
            #expect(result.standardOutput.contains("OPTIONS:") && result.standardOutput.contains("--version"))
            for command in Self.commands {
                #expect(result.standardOutput.contains("\n  " + command + " "), "\(command)")
            }
        }

        @Test func anUnknownOptionIsAUsageErrorThatPointsToHelp() async throws {
            let result = try await PackageExecutable.run("hexctl", ["inbox", "--sorted"])
            #expect(
                result.status == 64
                    && result.standardError == "hexctl: unknown option '--sorted'; see hexctl inbox --help\n")
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
            for words in [
                ["--data-dir", directory.path, "status"], ["--json", "--data-dir=\(directory.path)", "status"],
                ["status", "--data-dir", directory.path],
            ] {
                let result = try await PackageExecutable.run("hexctl", words)
                #expect(
                    result.status == 69
                        && result.standardError.contains(
                            "hexd is not running with the data directory \(directory.path) "),
                    "\(words)")
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
                struct Body: Decodable {
                    let code: String
                    let exitCode: Int32
                    let message: String
                }
                let error: Body
            }
            let failure = try JSONDecoder().decode(Failure.self, from: Data(result.standardError.utf8))
            #expect(
                result.status == 69 && failure.error.code == "unavailable" && failure.error.exitCode == 69
                    && result.standardOutput.isEmpty)
        }
    }
}
