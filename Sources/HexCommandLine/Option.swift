/// The name of an option, declared once as a constant (`extension OptionKey { static let json =
/// OptionKey("json") }`) and used both where a command lists the option and where it reads it:
/// a misspelt name is then a compile error, not a flag silently never read.
public struct OptionKey: Hashable, Sendable {
    /// The name without its dashes: `data-dir` for `--data-dir`.
    public let name: String

    public init(_ name: String) {
        self.name = name
    }
}

/// An option a command accepts: `--name <value>` or, without a value, a flag `--name`.
public struct Option: Sendable {
    public let key: OptionKey
    public var name: String { key.name }
    /// The placeholder shown in help (`<port>`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// May be given several times (values accumulate).
    public let repeatable: Bool
    /// A one-letter alias (`-d` for `--description`).
    public let short: Character?
    /// The command needs it (the usage line shows it).
    public let required: Bool

    public init(
        _ key: OptionKey, value: String? = nil, short: Character? = nil, repeatable: Bool = false,
        required: Bool = false, help: String
    ) {
        self.key = key
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
        self.short = short
        self.required = required
    }

    /// How the option is written: `-d, --description <text>`.
    public var synopsis: String {
        var usage = (short.map { "-\($0), " } ?? "") + "--\(name)" + (valueName.map { " <\($0)>" } ?? "")
        if repeatable { usage += " ..." }
        return usage
    }
}

/// A help section of aligned entries: each term, then its text from `column` on, wrapped to
/// `width`; a term too long for its column puts its text on the next line.
public func helpEntries(_ entries: [(term: String, text: String)], column: Int = 30, width: Int = terminalWidth())
    -> String
{
    entries.map { entry in
        let term = "  " + entry.term
        let lines = wrap(entry.text, width: max(width - column, 20))
        let first =
            term.count < column
            ? term + String(repeating: " ", count: column - term.count) + (lines.first ?? "")
            : term + "\n" + String(repeating: " ", count: column) + (lines.first ?? "")
        return ([first] + lines.dropFirst().map { String(repeating: " ", count: column) + $0 }).joined(separator: "\n")
    }.joined(separator: "\n")
}

/// Help text for a list of options, one aligned entry each.
public func optionsHelp(_ options: [Option], width: Int = terminalWidth()) -> String {
    helpEntries(options.map { ($0.synopsis, $0.help) }, width: width)
}

/// `text` broken into lines of at most `width` characters, at spaces (a word longer than a line
/// is cut into pieces).
public func wrap(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    let width = max(width, 1)
    let words = text.split(separator: " ", omittingEmptySubsequences: true).flatMap { word in
        stride(from: 0, to: word.count, by: width).map { word.dropFirst($0).prefix(width) }
    }
    for word in words {
        if !line.isEmpty && line.count + 1 + word.count > width {
            lines.append(line)
            line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines
}

/// A command line that does not fit the command: the message says what is wrong.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
