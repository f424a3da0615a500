/// Why bytes are not one JSON text, and where the reader stopped.
///
/// Every input the reader is given ends in a value or in one of these: it never traps.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: String, Sendable, Hashable {
        case unexpectedEnd = "the text ends too early"
        case unexpectedCharacter = "unexpected character"
        case controlCharacterInString = "unescaped control character in a string"
        case invalidEscape = "invalid escape sequence in a string"
        case invalidNumber = "invalid number"
        case tooDeep = "nested too deeply"
        case trailingCharacters = "characters after the value"
        /// Only where a reader needs text: a string whose bytes are not UTF-8, or an unpaired
        /// surrogate escape. (Envelopes read such a string as a field of the wrong type instead.)
        case invalidUnicode = "a string that is not valid Unicode"
    }

    public let reason: Reason
    /// The byte offset where reading stopped.
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason.rawValue) at byte \(offset)" }
}
