/// Why a Quick Share connection cannot go on: what a peer sent is malformed, out of order or does
/// not verify, or libcrypto refused a step.
public struct QuickShareError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }

    /// A message that could not be read, named by what it should have been.
    public init(_ what: String, _ error: ProtobufError) {
        self.description = "\(what): \(error.description)"
    }
}

extension ProtobufDecodable {
    /// Reads a message that a peer sent, failing with an error that names what it should have been.
    static func read(_ bytes: ArraySlice<UInt8>, as what: String) throws(QuickShareError) -> Self {
        do { return try Self(protobuf: bytes) } catch { throw QuickShareError(what, error) }
    }

    static func read(_ bytes: [UInt8], as what: String) throws(QuickShareError) -> Self {
        try read(bytes[...], as: what)
    }
}
