/// A DNS message (RFC 1035, section 4) as mDNS uses it: a header, questions, and three sections
/// of records.
public struct DNSMessage: Sendable, Equatable {
    public var id: UInt16
    public var flags: UInt16
    public var questions: [DNSQuestion]
    public var answers: [DNSRecord]
    public var authorities: [DNSRecord]
    public var additionals: [DNSRecord]

    /// The largest message read or written: mDNS allows 9000 bytes (RFC 6762, section 17).
    public static let maximumBytes = 9_000
    /// QR: a response. AA: authoritative, as every mDNS response is. TC: more known answers follow.
    public static let responseFlag: UInt16 = 0x8000
    public static let authoritativeFlag: UInt16 = 0x0400
    public static let truncatedFlag: UInt16 = 0x0200
    /// The opcode and response code bits: mDNS messages with either set are ignored.
    static let opcodeAndCodeBits: UInt16 = 0x7800 | 0x000F

    public init(
        id: UInt16 = 0, flags: UInt16 = 0, questions: [DNSQuestion] = [], answers: [DNSRecord] = [],
        authorities: [DNSRecord] = [], additionals: [DNSRecord] = []
    ) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    public var isResponse: Bool { flags & Self.responseFlag != 0 }

    /// A query with standard opcode and no error: one an mDNS responder answers.
    public var isStandardQuery: Bool { !isResponse && flags & Self.opcodeAndCodeBits == 0 }

    /// Every record of the message, answers first.
    public var records: [DNSRecord] { answers + authorities + additionals }

    /// Reads a message from `bytes`, whatever they hold: never traps, bounded in size, counts,
    /// name lengths and compression jumps.
    /// - Throws: `DNSError` saying what was wrong.
    public static func decode(_ bytes: [UInt8]) throws(DNSError) -> DNSMessage {
        var reader = DNSReader(bytes)
        return try reader.message()
    }

    /// The message's bytes, names compressed.
    /// - Throws: `DNSError` when it would be over `maximumBytes`.
    public func encoded() throws(DNSError) -> [UInt8] {
        var writer = DNSWriter()
        writer.write(self)
        guard writer.bytes.count <= Self.maximumBytes else {
            throw DNSError("the message would have \(writer.bytes.count) bytes, more than \(Self.maximumBytes)")
        }
        return writer.bytes
    }
}
