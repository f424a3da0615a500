import HexCarrier
import HexCommandLine
import HexKit

/// How hexd shares files with peers and fetches what peers shared (`--grant-ttl`, `--downloads`,
/// `--auto-fetch`). Each option is declared once, in `declared`.
public struct FileSettings: Sendable, Hashable {
    /// How long a grant may be redeemed.
    public var grantLifetime: Duration = .seconds(7 * 86_400)
    /// Where fetched files land; nil is `DownloadsFolder.defaultPath`.
    public var downloads: String?
    /// Fetch at once the files a paired peer shares.
    public var autoFetchPaired = false
    /// The most bytes a second all files served together may take; nil is no limit.
    public var maximumSendRate: Int?

    /// The lowest `--max-send-rate`: every fetch served at once keeps the pace a fetching peer
    /// expects (`TransferAllowance.minimumBytesPerSecond`).
    public static let lowestSendRate = 2 << 20

    /// The longest grant: a year.
    public static let longestGrantLifetime = 365.0 * 86_400

    public init() {}

    public static let declared: [Setting<FileSettings>] = [
        Setting(
            "grant-ttl", value: "duration",
            help: "How long a file shared with 'hexctl share --to' (the peer provider) may be fetched: seconds, "
                + "or a number with s, m, h or d. Default: 7d.",
            expected: "a duration from 1s to 365d", \.grantLifetime
        ) { text in
            DurationText.seconds(text).flatMap { Duration.seconds(validating: $0, in: 1...longestGrantLifetime) }
        },
        Setting(
            "downloads", value: "path",
            help: "Where fetched files land. Default: the XDG download folder (XDG_DOWNLOAD_DIR, "
                + "~/.config/user-dirs.dirs, ~/Downloads) when the data directory is in the home folder, "
                + "else <data-dir>/downloads.",
            expected: "an absolute path", \.downloads
        ) { text in
            text.hasPrefix("/") ? .some(text) : nil
        },
        Setting(
            "max-send-rate", value: "size|off",
            help: "The most bytes a second the files this daemon serves take, all fetches together "
                + "(64MiB, 500m; at least 2MiB). Default: off (as fast as the network and the peer go).",
            expected: "a size a second of at least 2MiB, or off", \.maximumSendRate
        ) { text in
            if text == "off" { return .some(nil) }
            return ByteCount.parse(text).flatMap { $0 >= lowestSendRate ? .some($0) : nil }
        },
        Setting(
            "auto-fetch", value: "paired|off",
            help: "paired: fetch the files a paired peer shares as soon as its hex arrives. Default: off "
                + "(hexctl fetch fetches them when asked).",
            expected: "paired or off", \.autoFetchPaired
        ) { text in
            switch text {
            case "paired": true
            case "off": false
            default: nil
            }
        },
    ]
}
