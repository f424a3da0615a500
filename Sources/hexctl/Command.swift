import HexCommandLine

/// A hexctl command: its words, what it takes, its help and what it does.
struct Command: Sendable {
    /// `["inbox", "show"]`.
    let words: [String]
    /// The arguments after the options, as help shows them (`<id>`).
    let usage: String
    /// What each argument of `usage` is, for the ARGUMENTS section.
    let arguments: [(name: String, help: String)]
    let summary: String
    /// More help, shown by `hexctl <command> --help`.
    let details: String
    let options: [Option]
    let run: @Sendable (Invocation) async throws -> ExitCode

    /// - Parameter usesDaemon: false for the commands that never talk to a daemon (they do not
    ///   offer `--data-dir`).
    init(
        _ words: String, _ usage: String = "", arguments: [(String, String)] = [], summary: String,
        details: String = "",
        options: [Option] = [], usesDaemon: Bool = true, run: @escaping @Sendable (Invocation) async throws -> ExitCode
    ) {
        // By bytes: splitting by Characters (grapheme clusters) made building the table a third of a
        // quick command's start.
        self.words = words.utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        self.usage = usage
        self.arguments = arguments.map { (name: $0.0, help: $0.1) }
        self.summary = summary
        self.details = details
        self.options =
            options + (usesDaemon ? Command.commonOptions : Command.commonOptions.filter { $0.name != "data-dir" })
        self.run = run
    }

    var name: String { words.joined(separator: " ") }

    static let commonOptions = [
        Option(
            .dataDirectory, value: "path",
            help:
                "The daemon's data directory. "
                + "Default: $HEXD_DATA_DIR, else $XDG_DATA_HOME/hexd, else ~/.local/share/hexd."
        ),
        Option(
            .json,
            help:
                "Print JSON: a result as one object, a list as one object per line, "
                + "an error as one object on standard error."
        ),
        Option(.help, short: "h", help: "Show this help."),
    ]

    /// The usage line: the command, its required options, the rest, its arguments.
    var synopsis: String {
        (["hexctl", name] + options.filter(\.required).map(\.synopsis) + ["[<options>]"]
            + (usage.isEmpty ? [] : [usage])).joined(separator: " ")
    }

    /// `hexctl <command> --help`; `commands` gives the subcommands to list.
    func help(among commands: [Command], width: Int = terminalWidth()) -> String {
        var sections = [
            "USAGE: \(synopsis)", Self.paragraphs(summary + (details.isEmpty ? "" : "\n\n" + details), width: width),
        ]
        if !arguments.isEmpty {
            sections.append("ARGUMENTS:\n" + helpEntries(arguments.map { ("<\($0.name)>", $0.help) }, width: width))
        }
        let subcommands = commands.filter {
            $0.words.count == words.count + 1 && Array($0.words.prefix(words.count)) == words
        }
        if !subcommands.isEmpty {
            sections.append(
                "SUBCOMMANDS:\n" + helpEntries(subcommands.map { ($0.words.last ?? "", $0.summary) }, width: width))
        }
        sections.append("OPTIONS:\n" + optionsHelp(options, width: width))
        sections.append(Self.paragraphs(Command.exitCodes, width: width))
        return sections.joined(separator: "\n\n")
    }

    /// Text whose paragraphs (split at blank lines) are wrapped to `width`.
    static func paragraphs(_ text: String, width: Int) -> String {
        text.split(separator: "\n\n", omittingEmptySubsequences: true).map { paragraph in
            wrap(paragraph.split(separator: "\n").joined(separator: " "), width: width).joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    static let exitCodes = """
        EXIT CODES: 0 ok, 1 failed (not found, not an envelope, ...), 64 usage error, 69 hexd is not
        running, 75 not delivered yet: the send is queued and hexd keeps trying (with --no-queue: the peer
        was unreachable or did not answer in time; try again later), 77 rejected or blocked by the peer.
        """
}
