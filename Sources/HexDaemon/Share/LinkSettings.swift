import HexCommandLine
import HexKit

/// What the `command` link provider is told (`hexd --link-command`). Each option is declared
/// once, in `declared`.
public struct LinkSettings: Sendable, Hashable {
    /// The template run once per shared file, `{path}` replaced by the file; none by default.
    public var command: String?
    /// The `service` of the links it makes.
    public var service: Service = .unknown
    /// How many link commands run at once.
    public var concurrency = 4
    /// How long one link command may run.
    public var timeout: Duration = .seconds(30)

    public init() {}

    public static let declared: [Setting<LinkSettings>] = [
        Setting(
            "link-command", value: "template",
            help: "The 'command' link provider: run once per shared file, {path} replaced by the file (no shell); "
                + "the first line it prints is the link. Example: \"cloud-tool link {path}\".",
            expected: "a command containing {path}", \.command
        ) { $0.contains("{path}") ? .some($0) : nil },
        Setting(
            "link-service", value: "name",
            help: "The service of the command's links (Dropbox, Box, GoogleDrive, Unknown or another). "
                + "Default: Unknown.",
            expected: "a service name", \.service
        ) { $0.isEmpty ? nil : Service(rawValue: $0) },
        .count("link-concurrency", in: 1...64, help: "How many link commands run at once. Default: 4.", \.concurrency),
        .seconds("link-timeout", help: "How long one link command may run. Default: 30.", \.timeout),
    ]
}
