import HexJSON

/// What one envelope may cost its receiver. The defaults are far above honest use (the original
/// app's UI held 40-character descriptions and a screenful of links); past them, an envelope is
/// refused whole with a reason (`EnvelopeDecodingError.exceedsLimit`) instead of being stored in part.
public struct EnvelopeLimits: Sendable, Hashable {
    /// Links in one hex.
    public var maximumLinks: Int
    /// Bytes in any one string field the receiver keeps (as written on the wire, escapes included).
    public var maximumStringBytes: Int
    /// Nesting depth of the whole line (Protocol.md: 512).
    public var json: JSONLimits

    public init(maximumLinks: Int = 100_000, maximumStringBytes: Int = 65_536, json: JSONLimits = .default) {
        self.maximumLinks = maximumLinks
        self.maximumStringBytes = maximumStringBytes
        self.json = json
    }

    public static let `default` = EnvelopeLimits()

    /// The longest line a receiver reads by default (Protocol.md, section 1): 16 MiB.
    public static let defaultMaximumLineLength = 16 << 20

    /// How much longer than its timeout a sender waits for the Ack of an envelope of `bytes`
    /// (Protocol.md, section 6): two seconds per MiB, since a large hex takes its receiver time to
    /// read, check and commit. A 100,000-link hex is not "unanswered" for being large.
    public static func ackAllowance(forBytes bytes: Int) -> Duration {
        .milliseconds(max(bytes, 0) / 524)
    }
}
