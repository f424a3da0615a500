/// Why a DNS message or name could not be read or made.
public struct DNSError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
