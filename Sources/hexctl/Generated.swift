import HexCommandLine

/// What hexctl writes about itself from its command table, so that nothing can drift from
/// `--help`: completion scripts (`--generate-completion-script bash|zsh|fish`) and its man page
/// (`--generate-manual`).
enum Generated {
    /// The shells a completion script is made for.
    static let shells = ["bash", "zsh", "fish"]

    static func completionScript(for shell: String, commands: [Command]) -> String? {
        switch shell {
        case "bash": bash(commands)
        case "zsh": zsh(commands)
        case "fish": fish(commands)
        default: nil
        }
    }

    /// The words each command path can be followed by: its subcommands and its options.
    private static func table(_ commands: [Command]) -> [(path: String, subcommands: [String], options: [String])] {
        let top = (
            path: "", subcommands: Array(Set(commands.compactMap(\.words.first))).sorted(),
            options: Command.commonOptions.map { "--\($0.name)" } + ["--version"]
        )
        return [top]
            + commands.map { command in
                let subcommands = commands.filter {
                    $0.words.count == command.words.count + 1
                        && Array($0.words.prefix(command.words.count)) == command.words
                }
                return (command.name, subcommands.compactMap(\.words.last), command.options.map { "--\($0.name)" })
            }
    }

    /// The options that take a value, so completion can tell a value from a command word.
    private static func valued(_ commands: [Command]) -> [String] {
        Array(
            Set(
                (commands.flatMap(\.options) + Command.commonOptions).filter { $0.valueName != nil }.map {
                    "--\($0.name)"
                })
        ).sorted()
    }

    /// Shell code (the same in bash and zsh) that walks the words before the cursor and leaves
    /// the command they name in `command_path` and the last word in `previous`, skipping options
    /// and the values of options that take one.
    private static func commandPathWalk(_ commands: [Command], first: String, end: String, word: String) -> String {
        """
            local valued=" \(valued(commands).joined(separator: " ")) "
            for ((i = \(first); i < \(end); i++)); do
                word=\(word)
                if [[ $word != -* && $valued != *" $previous "* ]]; then
                    command_path=${command_path:+$command_path }$word
                fi
                previous=$word
            done
        """
    }

    private static func bash(_ commands: [Command]) -> String {
        let cases = table(commands).map { entry in
            "        \"\(entry.path)\") subcommands=\"\(entry.subcommands.joined(separator: " "))\"; "
                + "options=\"\(entry.options.joined(separator: " "))\" ;;"
        }.joined(separator: "\n")
        return """
            # bash completion for hexctl (made by: hexctl --generate-completion-script bash)
            _hexctl() {
                local current=${COMP_WORDS[COMP_CWORD]} command_path="" word previous="" i subcommands options
            \(commandPathWalk(commands, first: "1", end: "COMP_CWORD", word: "${COMP_WORDS[i]}"))
                case "$command_path" in
            \(cases)
                    *) subcommands=""; options="" ;;
                esac
                if [[ $valued == *" $previous "* && -n $previous ]]; then
                    COMPREPLY=()
                elif [[ $current == -* ]]; then
                    COMPREPLY=($(compgen -W "$options" -- "$current"))
                else
                    COMPREPLY=($(compgen -W "$subcommands" -- "$current"))
                fi
            }
            complete -o default -F _hexctl hexctl

            """
    }

    private static func zsh(_ commands: [Command]) -> String {
        let cases = table(commands).map { entry in
            "        \"\(entry.path)\") subcommands=(\(entry.subcommands.joined(separator: " "))); "
                + "options=(\(entry.options.joined(separator: " "))) ;;"
        }.joined(separator: "\n")
        return """
            #compdef hexctl
            # zsh completion for hexctl (made by: hexctl --generate-completion-script zsh)
            _hexctl() {
                local command_path="" word previous="" i
                local -a subcommands options
            \(commandPathWalk(commands, first: "2", end: "CURRENT", word: "${words[i]}"))
                case "$command_path" in
            \(cases)
                    *) subcommands=(); options=() ;;
                esac
                if [[ -n $previous && $valued == *" $previous "* ]]; then
                    _files
                elif [[ ${words[CURRENT]} == -* ]]; then
                    compadd -- $options
                else
                    compadd -- $subcommands
                fi
            }
            _hexctl "$@"

            """
    }

    private static func fish(_ commands: [Command]) -> String {
        var lines = [
            "# fish completion for hexctl (made by: hexctl --generate-completion-script fish)", "complete -c hexctl -f",
        ]
        let top = Array(Set(commands.compactMap(\.words.first))).sorted()
        lines.append("complete -c hexctl -n '__fish_use_subcommand' -a '\(top.joined(separator: " "))'")
        for option in Command.commonOptions + [Option(.version, help: "Show the version.")] {
            lines.append(
                "complete -c hexctl -n '__fish_use_subcommand' "
                    + "-l \(option.name)\(option.valueName != nil ? " -r" : "") -d '\(fishQuoted(option.help))'"
            )
        }
        for command in commands {
            let condition =
                command.words.count == 1
                ? "__fish_seen_subcommand_from \(command.name)"
                : "__fish_seen_subcommand_from \(command.words[0]); and __fish_seen_subcommand_from \(command.words[1])"
            let subcommands = commands.filter { $0.words.count == 2 && $0.words[0] == command.name }.compactMap(
                \.words.last)
            if !subcommands.isEmpty {
                lines.append(
                    "complete -c hexctl -n '__fish_seen_subcommand_from \(command.name); "
                        + "and not __fish_seen_subcommand_from \(subcommands.joined(separator: " "))' "
                        + "-a '\(subcommands.joined(separator: " "))'"
                )
            }
            for option in command.options {
                lines.append(
                    "complete -c hexctl -n '\(condition)' "
                        + "-l \(option.name)\(option.valueName != nil ? " -r" : "") -d '\(fishQuoted(option.help))'"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fishQuoted(_ text: String) -> String {
        var quoted = ""
        for character in text.prefix(80) {
            if character == "'" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted
    }

    /// hexctl(1).
    static func manual(commands: [Command]) -> String {
        ManualPage(
            name: "hexctl", section: 1, summary: "the command-line client of hexd",
            synopsis: ["hexctl [--json] [--data-dir path] command [options] [arguments]"],
            description: """
                hexctl talks to a running hexd through the control socket in its data directory (--data-dir, \
                else HEXD_DATA_DIR, else $XDG_DATA_HOME/hexd, else ~/.local/share/hexd): it sends hexes (bundles \
                of links) to peers on the network, lists and manages the inbox and My Hexlist, shares files as \
                links, and follows the daemon's events. Every command takes --json and --help, before or after \
                its name. With --json a result is one JSON object on standard output, a list one object per \
                line, and an error one JSON object on standard error.
                """,
            sections: [
                (
                    title: "Commands",
                    entries: commands.map { command in
                        let options = command.options.filter { !Command.commonOptions.map(\.name).contains($0.name) }
                        let text =
                            ([command.summary] + command.arguments.map { "<\($0.name)>: \($0.help)" }
                            + options.map { "\($0.synopsis): \($0.help)" }).joined(separator: "\n")
                        return (term: command.synopsis.dropFirst("hexctl ".count).description, text: text)
                    }, text: ""
                ),
                (
                    title: "Options",
                    entries: (Command.commonOptions + [Option(.version, help: "Show the version.")]).map {
                        ($0.synopsis, $0.help)
                    }, text: ""
                ),
                (
                    title: "Exit status", entries: [],
                    text: Command.exitCodes.split(separator: "\n").joined(separator: " ")
                ),
                (title: "See also", entries: [], text: "hexd(8); Protocol.md and README.md in hexd's sources."),
            ]
        ).troff
    }
}
