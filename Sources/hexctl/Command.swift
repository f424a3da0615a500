import HexCommandLine

/// A hexctl command: its words, what it takes, its help and what it does.
struct Command: Sendable {
    /// `["inbox", "show"]`.
    let words: [String]
    /// The arguments after the options, as help shows them (`<id>`).
    let usage: String
    let summary: String
    /// More help, shown by `hexctl <command> --help`.
    let details: String
    let options: [Option]
    let run: @Sendable (Invocation) async throws -> ExitCode

    init(_ words: String, _ usage: String = "", summary: String, details: String = "", options: [Option] = [],
         run: @escaping @Sendable (Invocation) async throws -> ExitCode) {
        self.words = words.split(separator: " ").map(String.init)
        self.usage = usage
        self.summary = summary
        self.details = details
        self.options = options + Command.commonOptions
        self.run = run
    }

    var name: String { words.joined(separator: " ") }

    static let commonOptions = [
        Option("data-dir", value: "path", help: "The daemon's data directory. Default: $HEXD_DATA_DIR, else $XDG_DATA_HOME/hexd, else ~/.local/share/hexd."),
        Option("json", help: "Print JSON (one object per line) instead of text."),
        Option("help", short: "h", help: "Show this help."),
    ]

    var help: String {
        """
        USAGE: hexctl \(name) [<options>]\(usage.isEmpty ? "" : " " + usage)

        \(summary)\(details.isEmpty ? "" : "\n\n" + details)

        OPTIONS:
        \(optionsHelp(options))

        \(Command.exitCodes)
        """
    }

    static let exitCodes = """
        EXIT CODES: 0 ok, 1 failed (not found, not an envelope, ...), 64 usage error, 69 hexd is not
        running, 75 timeout or peer unreachable (try again later), 77 rejected or blocked by the peer.
        """
}
