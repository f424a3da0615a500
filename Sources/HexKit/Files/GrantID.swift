/// The id of a grant: 128 random bits from the system's generator, as 32 lowercase hex digits.
/// It is no secret that opens the file by itself: only the key it was granted to redeems it.
public enum GrantID {
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let words: [UInt64] = [generator.next(), generator.next()]
        return words.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.utf8.count) + digits
        }.joined()
    }

    /// Whether `text` is a grant id as written on the wire (any case).
    public static func isWellFormed(_ text: String) -> Bool {
        HexDigits.isHex(text, count: 32)
    }
}
