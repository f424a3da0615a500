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
        .seconds(
            "on-receive-timeout",
            help: "How long the on-receive command may run; past it, it is stopped with its children. Default: 30.",
            \.timeout),
        .count(
            "on-receive-concurrency", in: 1...64,
            help: "How many on-receive commands run at once; more hexes wait (at most 256). Default: 4.",
            \.concurrency),
    ]
}
