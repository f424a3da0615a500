import HexCommandLine
import HexKit

import Glibc

let overview = """
    USAGE: hexctl <command> [<options>]

    The command-line client of hexd: talks to the daemon through the control socket in its data
    directory (--data-dir, or HEXD_DATA_DIR). Every command takes --json and --help.

    COMMANDS:
    \(commands.map { "  " + ($0.name + ($0.usage.isEmpty ? "" : " " + $0.usage)).padded(to: 30) + $0.summary }.joined(separator: "\n"))

    \(Command.exitCodes)
    """

let words = Array(CommandLine.arguments.dropFirst())
if words.isEmpty || words == ["-h"] || words == ["--help"] || words == ["help"] {
    print(overview)
    exit(words.isEmpty ? ExitCode.usage.rawValue : 0)
}
if words == ["--version"] {
    print(HexdVersion.current)
    exit(0)
}
// The longest run of leading words that names a command ("inbox show" before "inbox").
let match = commands.filter { Array(words.prefix($0.words.count)) == $0.words }.max { $0.words.count < $1.words.count }
guard let command = match else {
    exit(.usage, program: "hexctl", message: "unknown command '\(words[0])'; see hexctl --help")
}
do {
    let arguments = try ParsedArguments(Array(words.dropFirst(command.words.count)), options: command.options)
    if arguments.flag("help") {
        print(command.help)
        exit(0)
    }
    let invocation = Invocation(command: command, arguments: arguments, environment: ProcessInfo.processInfo.environment)
    exit(try await command.run(invocation).rawValue)
} catch let error as UsageError {
    exit(.usage, program: "hexctl", message: "\(error); see hexctl \(command.name) --help")
} catch let failure as CommandFailure {
    exit(failure.code, program: "hexctl", message: failure.description)
} catch {
    exit(.failure, program: "hexctl", message: "\(error)")
}
