/// Cuts a D-Bus byte stream into messages as bytes arrive: a pure state machine, fuzzed on its
/// own. It holds at most one message (bounded by `maximumBytes`) and the bytes of one read.
public struct DBusMessageReader: Sendable {
    public let maximumBytes: Int
    private var buffer: [UInt8] = []

    public init(maximumBytes: Int = DBusMessage.maximumBytes) {
        self.maximumBytes = maximumBytes
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message, or nil until more bytes arrive.
    /// - Throws: `DBusError` for bytes that are not a message or one past the bound: the stream
    ///   cannot be read further.
    public mutating func next() throws(DBusError) -> DBusMessage? {
        guard buffer.count >= 16 else { return nil }
        let length = try DBusMessage.length(ofMessageStartingWith: buffer[..<16])
        guard length <= maximumBytes else {
            buffer = []
            throw .tooLarge(length)
        }
        guard buffer.count >= length else { return nil }
        let bytes = Array(buffer[..<length])
        buffer.removeFirst(length)
        return try DBusMessage.decode(bytes)
    }
}
