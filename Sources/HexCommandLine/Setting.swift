/// An option declared once: its name, placeholder and help (what `--help` and the man page show),
/// and how its text becomes a value of the settings it belongs to. A service declares its own
/// settings as a list of these; the command that runs it offers their options and applies what
/// the user gave, from wherever it came.
public struct Setting<Settings>: Sendable {
    public let option: Option
    /// What a refused value is told it should have been ("a size such as 32MiB").
    public let expected: String
    private let assign: @Sendable (String, inout Settings) -> Bool
    /// For a refused text that looks like a known slip, what to write instead; nil for any other.
    private let correction: @Sendable (String) -> String?

    /// - Parameters:
    ///   - keyPath: where the value goes.
    ///   - parse: the value of a text, or nil when the text is not one the option takes.
    public init<Value>(
        _ name: String, value: String, help: String, expected: String,
        _ keyPath: WritableKeyPath<Settings, Value> & Sendable, parse: @escaping @Sendable (String) -> Value?
    ) {
        option = Option(OptionKey(name), value: value, help: help)
        self.expected = expected
        correction = { _ in nil }
        assign = { text, settings in
            guard let value = parse(text) else { return false }
            settings[keyPath: keyPath] = value
            return true
        }
    }

    /// A repeatable option: each of its values, in order, is appended to a list (`--peer a --peer b`).
    /// - Parameters:
    ///   - keyPath: the list the values go to.
    ///   - parse: one value of a text, or nil when the text is not one the option takes.
    ///   - correction: for a refused text that looks like a known slip, what to write instead.
    public init<Value>(
        _ name: String, value: String, help: String, expected: String,
        appending keyPath: WritableKeyPath<Settings, [Value]> & Sendable,
        parse: @escaping @Sendable (String) -> Value?,
        correction: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        option = Option(OptionKey(name), value: value, repeatable: true, help: help)
        self.expected = expected
        self.correction = correction
        assign = { text, settings in
            guard let value = parse(text) else { return false }
            settings[keyPath: keyPath].append(value)
            return true
        }
    }

    /// Sets the value `text` gives.
    /// - Parameter source: where the text came from (`--inbox-budget`, `HEXD_INBOX_BUDGET`, a
    ///   config file's line), named by the error.
    /// - Throws: `UsageError` when the option does not take `text`.
    public func apply(_ text: String, to settings: inout Settings, source: String) throws(UsageError) {
        guard assign(text, &settings) else {
            let wanted = correction(text).map { "\(expected) (write \($0))" } ?? expected
            throw UsageError("\(source) needs \(wanted), not '\(text)'")
        }
    }

    /// Sets what the texts of one source give: each of them for a repeatable option, else the last.
    /// - Throws: `UsageError` naming the first text the option does not take.
    public func apply(_ texts: [String], to settings: inout Settings, source: String) throws(UsageError) {
        for text in option.repeatable ? texts : texts.suffix(1) { try apply(text, to: &settings, source: source) }
    }
}

extension Array {
    /// Applies what `lookup` finds for each of these options to `settings`.
    /// - Parameter lookup: the values of an option from the first source that has any, with that
    ///   source's name for errors (`--port`, `HEXD_PORT`, a config file's line); nil when none has.
    /// - Throws: `UsageError` naming the first value an option does not take.
    public func apply<Settings>(
        to settings: inout Settings, from lookup: (OptionKey) -> (values: [String], source: String)?
    ) throws(UsageError) where Element == Setting<Settings> {
        for setting in self {
            guard let (values, source) = lookup(setting.option.key) else { continue }
            try setting.apply(values, to: &settings, source: source)
        }
    }
}

extension Setting {
    /// Seconds above 0 and at most a day (`--idle-timeout 60`).
    public static func seconds(
        _ name: String, help: String, _ keyPath: WritableKeyPath<Settings, Duration> & Sendable
    ) -> Setting {
        Setting(name, value: "seconds", help: help, expected: "seconds (more than 0, at most 86400)", keyPath) {
            guard let seconds = Double($0), seconds.isFinite, seconds > 0, seconds <= 86_400 else { return nil }
            return .seconds(seconds)
        }
    }

    /// A whole number within `range`, for counts and sizes (`--max-connections 4096`).
    public static func count(
        _ name: String, value: String = "n", in range: ClosedRange<Int>, help: String,
        _ keyPath: WritableKeyPath<Settings, Int> & Sendable
    ) -> Setting {
        Setting(
            name, value: value, help: help,
            expected: "a whole number from \(range.lowerBound) to \(range.upperBound)", keyPath
        ) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }
}
