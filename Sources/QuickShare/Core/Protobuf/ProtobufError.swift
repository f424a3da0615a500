/// Why protocol buffers bytes could not be read as the message they claim to be.
public struct ProtobufError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
