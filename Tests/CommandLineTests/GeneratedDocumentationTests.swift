import Foundation
import HexHarness
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// Completion scripts and man pages are made from the same tables as --help: every command and
    /// option is in them, and they work in the tools they are for.
    @Suite struct GeneratedDocumentationTests {
        static let commands = HexctlHelpTests.commands

        private func generated(_ arguments: [String], program: String = "hexctl") async throws -> String {
            let result = try await PackageExecutable.run(program, arguments)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            return result.standardOutput
        }

        @Test func bashCompletesCommandsSubcommandsAndOptions() async throws {
            let script = try await generated(["--generate-completion-script", "bash"])
            let directory = try TemporaryDirectory()
            try script.write(toFile: directory.file("hexctl.bash"), atomically: true, encoding: .utf8)
            let probe = """
                source \(directory.file("hexctl.bash"))
                for line in 'hexctl in' 'hexctl inbox sh' 'hexctl send --t' 'hexctl --json inb' 'hexctl hexlist '; do
                    read -ra COMP_WORDS <<< "$line"; [[ $line == *' ' ]] && COMP_WORDS+=('')
                    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _hexctl; echo "$line -> ${COMPREPLY[*]}"
                done
                """
            let result = try await PackageExecutable.run("/bin/bash", ["-c", probe])
            #expect(
                result.standardOutput == """
                    hexctl in -> inbox
                    hexctl inbox sh -> show
                    hexctl send --t -> --to --timeout
                    hexctl --json inb -> inbox
                    hexctl hexlist  -> add remove move send

                    """, "\(result.standardError)")
        }

        @Test(arguments: ["bash", "zsh", "fish"])
        func everyScriptNamesEveryCommandAndOption(_ shell: String) async throws {
            let script = try await generated(["--generate-completion-script", shell])
            for word in Set(Self.commands.flatMap { $0.split(separator: " ").map(String.init) }) {
                #expect(script.contains(word), "\(shell): \(word)")
            }
            for option in ["to", "no-wait", "limit", "after", "full", "provider", "since", "peer", "data-dir", "json"] {
                #expect(script.contains(shell == "fish" ? "-l \(option)" : "--\(option)"), "\(shell): --\(option)")
            }
            // The shell itself checks the syntax.
            let checker = try ExternalTool.require(shell)
            let directory = try TemporaryDirectory()
            try script.write(toFile: directory.file("script"), atomically: true, encoding: .utf8)
            let arguments = [shell == "fish" ? "--no-execute" : "-n", directory.file("script")]
            let check = try await PackageExecutable.run(checker, arguments)
            #expect(check.status == 0, "\(shell): \(check.standardError)")
        }

        @Test func theManPagesListEveryCommandAndOption() async throws {
            let hexctl = try await generated(["--generate-manual"])
            #expect(hexctl.hasPrefix(".TH HEXCTL 1"))
            for command in Self.commands { #expect(hexctl.contains(".B \(command) "), "hexctl(1): \(command)") }
            let hexd = try await generated(["--generate-manual"], program: "hexd")
            #expect(hexd.hasPrefix(".TH HEXD 8"))
            for option in [
                "port", "max-connections", "partial-line-budget", "beacon-rate", "log-format", "link-command",
            ] {
                #expect(
                    hexd.contains("\\-\\-\(option.replacingOccurrences(of: "-", with: "\\-"))"), "hexd(8): --\(option)")
            }
            let groff = try ExternalTool.require("groff")
            let directory = try TemporaryDirectory()
            try hexctl.write(toFile: directory.file("hexctl.1"), atomically: true, encoding: .utf8)
            let rendered = try await PackageExecutable.run(
                groff, ["-man", "-Tutf8", "-ww", directory.file("hexctl.1")])
            let lines = rendered.standardOutput.split(separator: "\n").count
            #expect(
                rendered.status == 0 && rendered.standardError.isEmpty && lines > 50,
                "\(rendered.standardError)")
        }
    }
}
