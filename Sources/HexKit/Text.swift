extension StringProtocol {
    /// Without white space (spaces, tabs, line ends, any Unicode space) at either end.
    public var trimmed: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
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
