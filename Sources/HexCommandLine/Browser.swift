/// The program that opens a URL for the user: hexctl open, and a notification's actions.
public enum Browser {
    /// The first command of `$BROWSER` (a colon-separated list, its words split at spaces), else
    /// `xdg-open`. The URL is given as one more argument, never through a shell.
    public static func command(_ environment: [String: String]) -> [String] {
        let first = environment["BROWSER"]?.split(separator: ":").first
        let words = first?.split(separator: " ").map(String.init) ?? []
        return words.isEmpty ? ["xdg-open"] : words
    }

    /// Whether a link from a peer may be handed to the browser: http, https and mailto only
    /// (never `javascript:`, `file:` or a word the browser would take for an option), without
    /// spaces or control characters.
    public static func mayOpen(_ url: String) -> Bool {
        let lowered = url.lowercased()
        guard ["http://", "https://", "mailto:"].contains(where: { lowered.hasPrefix($0) }) else { return false }
        return !url.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }
}
