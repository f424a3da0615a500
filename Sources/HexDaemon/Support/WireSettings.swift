import HexCommandLine
import HexKit

/// How this daemon speaks with peers, for every service that reads or writes envelopes: the
/// version it announces, whether it plays a legacy peer, whether plain TCP is spoken, and the
/// bounds of one envelope. The options with a value are declared once, in `declared`; `--legacy`
/// is a flag, read where the configuration is assembled.
public struct WireSettings: Sendable, Hashable {
    /// The `versionID` this daemon announces and writes in its envelopes.
    public var appVersion = HexdVersion.current
    /// Play a legacy (1.x) peer: send only what the original app sent, never answer with an Ack.
    public var legacy = false
    /// Whether plain TCP is spoken with peers that have no TLS (legacy peers).
    public var plaintext = PlaintextPolicy.accept
    public var maximumLineLength = EnvelopeLimits.defaultMaximumLineLength
    /// What one envelope may carry.
    public var envelopeLimits = EnvelopeLimits.default

    /// Whether plain TCP is spoken with peers that have no TLS.
    public enum PlaintextPolicy: String, Sendable {
        /// With legacy peers (1.x, or no `tls` announced) and addresses sent to with `--legacy`.
        case accept
        /// Never: every connection is TLS, and legacy peers are neither sent to nor heard.
        case refuse
    }

    public init() {}

    public static let declared: [Setting<WireSettings>] = [
        Setting(
            "app-version", value: "version",
            help: "The versionID to announce and send. Default: \(HexdVersion.current).",
            expected: "a version", \.appVersion
        ) { $0.isEmpty ? nil : $0 },
        Setting(
            "plaintext", value: "policy",
            help: "accept: speak plain TCP with legacy peers, which have no TLS (the default); "
                + "refuse: TLS only, with every peer.",
            expected: "accept or refuse", \.plaintext, parse: PlaintextPolicy.init(rawValue:)),
        .count(
            "max-line", value: "bytes", in: 1_024...(1 << 30),
            help: "Largest envelope line accepted. Default: 16777216 (16 MiB).", \.maximumLineLength),
        .count(
            "max-links", in: 1...10_000_000,
            help: "Links one hex may carry; a larger one is refused whole (Ack invalid). Default: 100000.",
            \.envelopeLimits.maximumLinks),
        .count(
            "max-string", value: "bytes", in: 64...(1 << 30),
            help: "Bytes one string of an envelope may have (URL, description, name...). Default: 65536.",
            \.envelopeLimits.maximumStringBytes),
    ]
}
