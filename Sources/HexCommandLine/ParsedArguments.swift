/// Arguments parsed against a list of options: the values and flags given, and the rest in order.
public struct ParsedArguments: Sendable {
    /// Values by option name, in the order given.
    public private(set) var values: [String: [String]] = [:]
    public private(set) var flags: Set<String> = []
    public private(set) var positionals: [String] = []

    /// Parses `arguments`. `--name value`, `--name=value` and `-x value` are accepted; `--` ends
    /// the options.
    /// - Throws: `UsageError` for an unknown option, a missing value, a flag given a value, or a
    ///   non-repeatable option given twice.
    public init(_ arguments: [String], options: [Option]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals += remaining
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            let (name, inlineValue) = Self.split(argument)
            let option = options.first { "--\($0.name)" == name || $0.short.map { "-\($0)" } == name }
            guard let option else { throw UsageError("unknown option '\(name)'") }
            guard option.valueName != nil else {
                guard inlineValue == nil else { throw UsageError("--\(option.name) takes no value") }
                flags.insert(option.name)
                continue
            }
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw UsageError("--\(option.name) needs a value")
            }
            guard option.repeatable || values[option.name] == nil else {
                throw UsageError("--\(option.name) is given more than once")
            }
            values[option.name, default: []].append(value)
        }
    }

    /// The value of a single-valued option.
    public func value(_ key: OptionKey) -> String? { values[key.name]?.last }

    /// Whether a flag was given.
    public func flag(_ key: OptionKey) -> Bool { flags.contains(key.name) }

    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
