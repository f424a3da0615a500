/// The `#RRGGBB` colour strings of hexes.
public enum HexColor {
    /// The original app's default colour, used whenever a colour must be sent and none is usable.
    public static let fallback = "#AAAAAA"

    /// `color` as uppercase `#RRGGBB`, or nil when it is not six hex digits after an optional `#`.
    public static func normalized(_ color: String) -> String? {
        let digits = color.hasPrefix("#") ? color.dropFirst() : Substring(color)
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        return "#" + digits.uppercased()
    }
}
