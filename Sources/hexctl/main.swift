import Glibc
import HexCommandLine
import HexKit

/// `hexctl --help`: every command, the options every command takes, the exit codes.
func overview(width: Int = terminalWidth()) -> String {
    [
        "USAGE: hexctl [--json] [--data-dir <path>] <command> [<options>]",
        Command.paragraphs(
            """
            The command-line client of hexd: talks to the daemon through the control socket in its data
            directory (--data-dir, or HEXD_DATA_DIR). Every command takes --json and --help, before or
            after its name; 'hexctl help <command>' shows a command's help. With --json, results are JSON
            on standard output (a list: one object per line) and an error is one JSON object on standard
            error: {"error":{"code":…,"exitCode":…,"message":…}}.
            """, width: width),
        "COMMANDS:\n"
            + helpEntries(
                commands.map { ($0.name + ($0.usage.isEmpty ? "" : " " + $0.usage), $0.summary) }, width: width),
        "OPTIONS:\n"
            + optionsHelp(
                Command.commonOptions + [
                    Option(.version, help: "Show the version."),
                    Option(
                        .generateCompletionScript, value: "shell",
                        help: "Print a completion script for bash, zsh or fish."),
                    Option(.generateManual, help: "Print the man page, hexctl(1), in troff."),
                ], width: width),
        Command.paragraphs(Command.exitCodes, width: width),
    ].joined(separator: "\n\n")
}

let words = Array(CommandLine.arguments.dropFirst())
let wantsJSON = words.contains("--json")
let request: CommandLineResolution.Request
do {
    request = try CommandLineResolution.resolve(words, commands: commands)
} catch {
    fail(.usage, "\(error)", json: wantsJSON)
}
switch request {
case .overview:
    print(overview())
    exit(words.isEmpty ? ExitCode.usage.rawValue : 0)
case .version:
    print(HexdVersion.current)
    exit(0)
case .completionScript(let shell):
    print(Generated.completionScript(for: shell, commands: commands) ?? "", terminator: "")
    exit(0)
case .manual:
    print(Generated.manual(commands: commands), terminator: "")
    exit(0)
case .help(let command):
    print(command.help(among: commands))
    exit(0)
case .run(let command, let argumentWords):
    let json = wantsJSON
    runToExit {
        do {
            let arguments = try ParsedArguments(argumentWords, options: command.options)
            if arguments.flag(.help) {
                print(command.help(among: commands))
                exit(0)
            }
            let invocation = Invocation(
                command: command, arguments: arguments,
                environment: ProcessInfo.processInfo.environment)
            exit(try await command.run(invocation).rawValue)
        } catch let error as UsageError {
            fail(.usage, "\(error); see hexctl \(command.name) --help", json: json)
        } catch let failure as CommandFailure {
            fail(failure.code, failure.description, json: json)
        } catch {
            fail(.failure, "\(error)", json: json)
        }
    }
}

/// Ends hexctl with `code`: the message on standard error, as a line of text, or with `--json` as
/// one JSON object `{"error":{"code":…,"exitCode":…,"message":…}}`.
func fail(_ code: ExitCode, _ message: String, json asJSON: Bool) -> Never {
    guard asJSON else { exit(code, program: "hexctl", message: message) }
    printError(json(JSONError(error: .init(code: code.name, exitCode: code.rawValue, message: message))))
    exit(code.rawValue)
}

/// An error as `--json` prints it.
struct JSONError: Encodable {
    struct Body: Encodable {
        let code: String
        let exitCode: Int32
        let message: String
    }

    let error: Body
}
