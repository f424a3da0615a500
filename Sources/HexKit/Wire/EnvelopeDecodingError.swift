/// Why bytes could not be read as an envelope. Anything else a peer sends decodes.
public enum EnvelopeDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not one JSON value in UTF-8 (this includes nesting deeper than the reader's
    /// limit and text after the value).
    case malformedJSON
    /// The JSON value is not an object.
    case notAnObject
    /// A required key (`versionID` or `operationType`) is missing, null or not a string or number.
    /// `messageID` is the envelope's `messageID` when it has a readable one, so the sender can
    /// still be answered.
    case missingKey(String, messageID: String?)
    /// The envelope is larger than the receiver takes (`EnvelopeLimits`): the reason says which
    /// limit, with the numbers.
    case exceedsLimit(String, messageID: String?)

    /// The `messageID` of the object that failed to be an envelope, when it had one.
    public var messageID: String? {
        switch self {
        case .missingKey(_, let messageID), .exceedsLimit(_, let messageID): messageID
        case .malformedJSON, .notAnObject: nil
        }
    }

    public var description: String {
        switch self {
        case .malformedJSON:
            "the envelope is not valid UTF-8 JSON; the peer's version may be incompatible"
        case .notAnObject:
            "the envelope is JSON but not an object; the peer's version may be incompatible"
        case .missingKey(let key, _):
            "the envelope has no string \"\(key)\"; the peer's version may be incompatible"
        case .exceedsLimit(let reason, _):
            "the envelope is too large for this receiver: \(reason)"
        }
    }
}
