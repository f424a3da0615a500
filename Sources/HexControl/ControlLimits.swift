import HexKit

/// The bounds of what the control protocol sends by default, so that no stored hex, however
/// large, can make a listing or a `show` fail: lists carry summaries with short fields, `show`
/// cuts long fields and link lists and says so, and `full` asks for everything.
public enum ControlLimits {
    /// Characters of each text field in a list item.
    public static let listFieldCharacters = 200
    /// Bytes of each text field in `show`.
    public static let showFieldBytes = 4_096
    /// Links in `show`.
    public static let showLinks = 1_000
    /// The longest request line the daemon reads (a send's links come in it).
    public static let requestLineBytes = 64 << 20
    /// The longest response line a client reads: enough for any bounded response.
    public static let responseLineBytes = 64 << 20
    /// The longest response line a client reads for `show` with `full`: an envelope line of the
    /// largest size the daemon accepts (1 GiB), escaped.
    public static let fullResponseLineBytes = 4 << 30
    /// Items a list reads from the store at a time.
    public static let pageSize = 200
}

extension Hex {
    /// This hex with every text field cut to `fieldBytes` and at most `links` links; whether
    /// anything was cut.
    public func clipped(fieldBytes: Int, links maximumLinks: Int) -> (Hex, truncated: Bool) {
        var clipped = self
        var truncated = links.count > maximumLinks
        func clip(_ text: String) -> String {
            let cut = text.clipped(toUTF8: fieldBytes)
            if cut.utf8.count != text.utf8.count { truncated = true }
            return cut
        }
        clipped.senderUUID = clip(senderUUID)
        clipped.senderName = clip(senderName)
        clipped.hexDescription = clip(hexDescription)
        clipped.hexColor = clip(hexColor)
        clipped.links = links.prefix(maximumLinks).map { link in
            Link(
                id: link.id, url: clip(link.url), linkDescription: clip(link.linkDescription),
                service: Service(rawValue: clip(link.service.rawValue)))
        }
        return (clipped, truncated)
    }
}

extension HexSummary {
    /// This summary with every text field cut to `characters`; whether any was longer. (Read
    /// the summary with one character more than that, so a cut can be told from a field that fits.)
    public func clipped(toCharacters characters: Int) -> (HexSummary, truncated: Bool) {
        var clipped = self
        var truncated = false
        func clip(_ text: String) -> String {
            guard text.count > characters else { return text }
            truncated = true
            return String(text.prefix(characters))
        }
        clipped.senderUUID = clip(senderUUID)
        clipped.senderName = clip(senderName)
        clipped.hexDescription = clip(hexDescription)
        clipped.hexColor = clip(hexColor)
        return (clipped, truncated)
    }
}
