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

    public var description: String {
        labels.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".") + "."
    }

    /// Whether this name is `parent` with one label before it (a service instance of its type),
    /// compared without making a name of the rest.
    public func isChild(of parent: DNSName) -> Bool {
        labels.count == parent.labels.count + 1
            && zip(labels.dropFirst(), parent.labels).allSatisfy { Self.sameLabel($0, $1) }
    }

    /// Compared byte by byte, ASCII letters in either case the same, and no label copied: a crowd's
    /// mDNS responses are compared record by record in every browser.
    public static func == (left: DNSName, right: DNSName) -> Bool {
        guard left.labels.count == right.labels.count else { return false }
        for index in left.labels.indices where !sameLabel(left.labels[index], right.labels[index]) { return false }
        return true
    }

    /// Whether two labels are the same, ASCII letters in either case (a plain loop: this runs for
    /// every record of every response in every browser).
    private static func sameLabel(_ label: [UInt8], _ other: [UInt8]) -> Bool {
        guard label.count == other.count else { return false }
        for index in label.indices where folded(label[index]) != folded(other[index]) { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        for label in labels {
            hasher.combine(label.count)
            for byte in label { hasher.combine(Self.folded(byte)) }
        }
    }

    /// The byte in lower case when it is an ASCII capital letter; as it is otherwise.
    static func folded(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
