extension StringProtocol {
    /// Without white space (spaces, tabs, line ends, any Unicode space) at either end.
    public var trimmed: String {
        // Sliced, not rebuilt character by character: every received Store's sender is trimmed.
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// The string cut to at most `count` bytes of UTF-8, on a character boundary.
    public func clipped(toUTF8 count: Int) -> String {
        guard utf8.count > count else { return self }
        var clipped = ""
        for character in self {
            guard clipped.utf8.count + character.utf8.count <= count else { break }
            clipped.append(character)
        }
        return clipped
    }
}
