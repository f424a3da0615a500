/// An option a command accepts: `--name <value>` or, without a value, a flag `--name`.
public struct Option: Sendable {
    public let name: String
    /// The placeholder shown in help (`<port>`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// May be given several times (values accumulate).
    public let repeatable: Bool
    /// A one-letter alias (`-d` for `--description`).
    public let short: Character?

    public init(_ name: String, value: String? = nil, short: Character? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
        self.short = short
    }

    /// The line of help for this option, with the help text starting at `column`.
    func helpLine(column: Int) -> String {
        var usage = "  " + (short.map { "-\($0), " } ?? "") + "--\(name)" + (valueName.map { " <\($0)>" } ?? "")
        if repeatable { usage += " ..." }
        let padding = usage.count < column ? String(repeating: " ", count: column - usage.count) : "\n" + String(repeating: " ", count: column)
        return usage + padding + help
    }
}

/// Help text for a list of options, one aligned line each.
public func optionsHelp(_ options: [Option]) -> String {
    options.map { $0.helpLine(column: 30) }.joined(separator: "\n")
}

/// A command line that does not fit the command: the message says what is wrong.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
