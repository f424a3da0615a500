import HexCommandLine

/// How hexctl reads its words: which command they name, and its arguments.
///
/// Global options (`--json`, `--data-dir`, `--help`) may stand before the command as well as
/// after it. A word that is neither a command nor an argument the command takes is a usage
/// error that suggests the nearest command.
enum CommandLineResolution {
    /// What the words ask for.
    enum Request {
        /// The overview help (`hexctl`, `hexctl --help`, `hexctl help`).
        case overview
        /// A command's help (`hexctl help inbox show`, `hexctl inbox show --help`).
        case help(Command)
        case version
        /// A completion script for this shell (`--generate-completion-script bash`).
        case completionScript(String)
        /// The man page (`--generate-manual`).
        case manual
        /// Run a command with these argument words (global options included).
        case run(Command, [String])
    }

    /// The options every command takes, which may also come first.
    static let globalOptions = ["--json", "--data-dir", "--help", "-h"]

    static func resolve(_ words: [String], commands: [Command]) throws(UsageError) -> Request {
        // Global options before the command move behind it, where every command takes them.
        if words.first == "--generate-completion-script" {
            guard words.count == 2, let shell = words.last, Generated.shells.contains(shell) else {
                throw UsageError(
                    "--generate-completion-script needs one of \(Generated.shells.joined(separator: ", "))")
            }
            return .completionScript(shell)
        }
        if words == ["--generate-manual"] { return .manual }
        var rest = words[...]
        var moved: [String] = []
        while let first = rest.first, first.hasPrefix("-") {
            let name = first.split(separator: "=", maxSplits: 1).first.map(String.init) ?? first
            if first == "--version" && rest.count == 1 && moved.isEmpty { return .version }
            guard globalOptions.contains(name) else {
                throw UsageError("unknown option '\(first)' before the command; see hexctl --help")
            }
            moved.append(rest.removeFirst())
            if name == "--data-dir" && !first.contains("="), let value = rest.first {
                moved.append(value)
                rest.removeFirst()
            }
        }
        if rest.isEmpty { return .overview }
        if rest.first == "help" {
            let named = Array(rest.dropFirst())
            guard !named.isEmpty else { return .overview }
            guard let command = commands.first(where: { $0.words == named }) else {
                throw unknown(named.joined(separator: " "), commands: commands)
            }
            return .help(command)
        }
        // The longest run of leading words that names a command ("inbox show" before "inbox").
        guard
            let command = commands.filter({ Array(rest.prefix($0.words.count)) == $0.words }).max(by: {
                $0.words.count < $1.words.count
            })
        else {
            throw unknown(rest.first ?? "", commands: commands)
        }
        let arguments = Array(rest.dropFirst(command.words.count)) + moved
        // A command that takes no arguments, given a word: a mistyped subcommand, or too much.
        if command.usage.isEmpty, let extra = arguments.first(where: { !$0.hasPrefix("-") }),
            !isOptionValue(extra, in: arguments, of: command)
        {
            let subcommands = commands.filter {
                $0.words.count == command.words.count + 1
                    && Array($0.words.prefix(command.words.count)) == command.words
            }
            let names = subcommands.compactMap(\.words.last)
            if let near = suggestion(for: extra, among: names) {
                throw UsageError(
                    "unknown command '\(command.name) \(extra)'; did you mean 'hexctl \(command.name) \(near)'?")
            }
            guard names.isEmpty else {
                throw UsageError(
                    "unknown command '\(command.name) \(extra)'; "
                        + "the commands of \(command.name) are \(names.joined(separator: ", "))"
                )
            }
            throw UsageError("hexctl \(command.name) takes no argument, not '\(extra)'")
        }
        return .run(command, arguments)
    }

    /// Whether `word` is the value of an option that takes one (`--limit 5`).
    private static func isOptionValue(_ word: String, in arguments: [String], of command: Command) -> Bool {
        guard let index = arguments.firstIndex(of: word), index > 0 else { return false }
        let previous = arguments[index - 1]
        return !previous.contains("=") && command.options.contains { "--\($0.name)" == previous && $0.valueName != nil }
    }

    private static func unknown(_ word: String, commands: [Command]) -> UsageError {
        let names = Set(commands.map(\.name) + commands.compactMap(\.words.first))
        let hint = suggestion(for: word, among: Array(names)).map { "; did you mean '\($0)'?" } ?? ""
        return UsageError("unknown command '\(word)'\(hint) See hexctl --help")
    }
}
