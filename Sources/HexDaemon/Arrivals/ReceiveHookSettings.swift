import HexCommandLine
import HexKit

/// What the on-receive hook is told (`hexd --on-receive`). Each option is declared once, in
/// `declared`.
public struct ReceiveHookSettings: Sendable, Hashable {
    /// The command's words, run for each hex stored; nil for no hook.
    public var command: [String]?
    public var timeout: Duration = .seconds(30)
    public var concurrency = 4

    public init() {}

    public static let declared: [Setting<ReceiveHookSettings>] = [
        Setting(
            "on-receive", value: "command",
            help: "Run this command for each hex stored: its words split at spaces, no shell; the hex as one "
                + "JSON object on standard input, HEX_ID, HEX_SENDER_ID, HEX_SENDER_NAME and HEX_TRUST in its "
                + "environment. None by default.",
            expected: "a command", \.command
        ) { text in
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            return words.isEmpty ? nil : .some(words)
        },
        Setting(
            "on-receive-timeout", value: "seconds",
            help: "How long the on-receive command may run; past it, it is stopped with its children. Default: 30.",
            expected: "seconds (more than 0, at most 86400)", \.timeout
        ) { text in
            Double(text).flatMap { $0 > 0 ? Duration.seconds(validating: $0, in: 0...86_400) : nil }
        },
        Setting(
            "on-receive-concurrency", value: "n",
            help: "How many on-receive commands run at once; more hexes wait (at most 256). Default: 4.",
            expected: "a whole number from 1 to 64", \.concurrency
        ) { text in
            Int(text).flatMap { (1...64).contains($0) ? $0 : nil }
        },
    ]
}
