/// A domain name as labels of bytes (mDNS names are UTF-8, RFC 6762 section 16), compared without
/// regard to ASCII case, as DNS compares them.
///
/// Bounded as RFC 1035 says: a label has 1 to 63 bytes, and the whole name at most 255 in its
/// wire form.
public struct DNSName: Sendable, Hashable, CustomStringConvertible {
    /// The labels, first to last, without the root.
    public let labels: [[UInt8]]

    public static let maximumLabelBytes = 63
    public static let maximumWireBytes = 255

    /// - Throws: `DNSError` for an empty label or one over 63 bytes, or a name over 255 bytes.
    public init(labels: [[UInt8]]) throws(DNSError) {
        guard labels.allSatisfy({ !$0.isEmpty && $0.count <= Self.maximumLabelBytes }) else {
            throw DNSError("a label must have 1 to \(Self.maximumLabelBytes) bytes")
        }
        guard labels.reduce(1, { $0 + $1.count + 1 }) <= Self.maximumWireBytes else {
            throw DNSError("a name must have at most \(Self.maximumWireBytes) bytes")
        }
        self.labels = labels
    }

    /// The name of these labels, each given as text (a label may hold dots: an instance name).
    public init(_ labels: String...) throws(DNSError) {
        try self.init(labels: labels.map { Array($0.utf8) })
    }

    /// This name under `suffix`: `DNSName("Ada").appending(service)`.
    public func appending(_ suffix: DNSName) throws(DNSError) -> DNSName {
        try DNSName(labels: labels + suffix.labels)
    }

    /// The first label as text (an instance's name), with bytes that are not UTF-8 replaced.
    public var firstLabel: String { labels.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// This name without its first label: a service instance's service type.
    public var parent: DNSName? {
        labels.isEmpty ? nil : try? DNSName(labels: Array(labels.dropFirst()))
    }

    public var description: String {
        labels.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".") + "."
    }

    public static func == (left: DNSName, right: DNSName) -> Bool {
        left.labels.count == right.labels.count
            && zip(left.labels, right.labels).allSatisfy { Self.folded($0) == Self.folded($1) }
    }

    public func hash(into hasher: inout Hasher) {
        for label in labels { hasher.combine(Self.folded(label)) }
    }

    /// A label with its ASCII letters in lower case.
    static func folded(_ label: [UInt8]) -> [UInt8] {
        label.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}
