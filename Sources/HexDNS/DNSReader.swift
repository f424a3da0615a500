/// Reads a DNS message from untrusted bytes. Every read is checked against the end; a compressed
/// name may only point backwards, at most `maximumJumps` times, so no input can loop or trap.
struct DNSReader {
    private let bytes: [UInt8]
    private var offset = 0

    /// Records in all sections together: a 9000-byte message holds at most about 800 (11 bytes
    /// each at least), so more can only be a lie in the header.
    static let maximumRecords = 1_024
    /// Pointers followed in one name at most: as many as a name can have labels (each at least two
    /// bytes of 255), since a pointer hexd writes lands on a label and adds it (`DNSWriter`), so any
    /// name hexd writes reads back, and pointers going only backwards keep the cost bounded.
    static let maximumJumps = DNSName.maximumWireBytes / 2

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func message() throws(DNSError) -> DNSMessage {
        guard bytes.count <= DNSMessage.maximumBytes else {
            throw DNSError("a message of \(bytes.count) bytes is over \(DNSMessage.maximumBytes)")
        }
        let id = try uint16()
        let flags = try uint16()
        let counts = [try uint16(), try uint16(), try uint16(), try uint16()].map(Int.init)
        guard counts.reduce(0, +) <= Self.maximumRecords else { throw DNSError("too many records") }
        var message = DNSMessage(id: id, flags: flags)
        for _ in 0..<counts[0] {
            let name = try name()
            let type = try uint16()
            let classBits = try uint16()
            message.questions.append(
                DNSQuestion(
                    name: name, type: type,
                    unicastResponse: classBits & DNSClass.topBit != 0,
                    recordClass: classBits & ~DNSClass.topBit))
        }
        for _ in 0..<counts[1] { message.answers.append(try record()) }
        for _ in 0..<counts[2] { message.authorities.append(try record()) }
        for _ in 0..<counts[3] { message.additionals.append(try record()) }
        return message
    }

    private mutating func record() throws(DNSError) -> DNSRecord {
        let name = try name()
        let type = try uint16()
        let classBits = try uint16()
        let ttl = UInt32(try uint16()) << 16 | UInt32(try uint16())
        let length = Int(try uint16())
        guard length <= bytes.count - offset else { throw DNSError("a record runs past the end") }
        let end = offset + length
        let data = try recordData(type: type, end: end)
        guard offset == end else { throw DNSError("a record of type \(type) has \(end - offset) bytes left over") }
        return DNSRecord(
            name: name, data: data, ttl: ttl, cacheFlush: classBits & DNSClass.topBit != 0,
            recordClass: classBits & ~DNSClass.topBit)
    }

    private mutating func recordData(type: UInt16, end: Int) throws(DNSError) -> DNSRecordData {
        switch type {
        case DNSType.a:
            return .a(try take(4))
        case DNSType.aaaa:
            return .aaaa(try take(16))
        case DNSType.ptr:
            return .ptr(try name())
        case DNSType.srv:
            return .srv(priority: try uint16(), weight: try uint16(), port: try uint16(), target: try name())
        case DNSType.txt:
            // No bytes at all reads as what they should have been: one empty string.
            var strings: [[UInt8]] = offset == end ? [[]] : []
            while offset < end {
                let count = Int(try take(1)[0])
                guard count <= end - offset else { throw DNSError("a TXT string runs past its record") }
                strings.append(try take(count))
            }
            return .txt(strings)
        case DNSType.nsec:
            // A bitmap another responder wrote wrong costs that record's meaning, not the message:
            // the record is kept as bytes. python-zeroconf 0.47 writes each block's window and
            // length as two-byte numbers (`DNSNsec.write`), and answers with such a record. Its next
            // name must read within the record, as any name must, and is kept written out in full:
            // a compression pointer among the bytes would mean another name in another message.
            let next = try name()
            guard offset <= end else { throw DNSError("an NSEC's next name runs past its record") }
            let bitmap = offset
            if let types = try? nsecTypes(end: end) { return .nsec(next: next, types: types) }
            offset = bitmap
            var spelled: [UInt8] = []
            // A label holds at most 63 bytes (`DNSName`).
            for label in next.labels { spelled += [UInt8(truncatingIfNeeded: label.count)] + label }
            return .other(type: type, bytes: spelled + [0] + (try take(end - offset)))
        default:
            return .other(type: type, bytes: try take(end - offset))
        }
    }

    /// The types an NSEC record's bitmap blocks list (RFC 4034, section 4.1; RFC 6762, section
    /// 6.1), from its next name up to `end`.
    private mutating func nsecTypes(end: Int) throws(DNSError) -> [UInt16] {
        var types: [UInt16] = []
        while offset < end {
            let header = try take(2)
            let (window, count) = (UInt16(header[0]), Int(header[1]))
            guard (1...32).contains(count), count <= end - offset else { throw DNSError("a bad NSEC bitmap") }
            for (index, byte) in try take(count).enumerated() {
                for bit in 0..<8 where byte & (0x80 >> bit) != 0 {
                    types.append(window << 8 | UInt16(index * 8 + bit))
                }
            }
        }
        return Array(Set(types)).sorted()
    }

    /// A name at the current offset, following compression pointers (RFC 1035, section 4.1.4).
    private mutating func name() throws(DNSError) -> DNSName {
        var labels: [[UInt8]] = []
        var position = offset
        var resume: Int?
        var jumps = 0
        var wireBytes = 1
        while true {
            guard position < bytes.count else { throw DNSError("a name runs past the end") }
            let length = Int(bytes[position])
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    offset = resume ?? position + 1
                    return try DNSName(labels: labels)
                }
                guard length <= bytes.count - position - 1 else { throw DNSError("a label runs past the end") }
                wireBytes += length + 1
                guard wireBytes <= DNSName.maximumWireBytes else { throw DNSError("a name over 255 bytes") }
                labels.append(Array(bytes[(position + 1)...(position + length)]))
                position += length + 1
            case 0xC0:
                guard position + 1 < bytes.count else { throw DNSError("a pointer runs past the end") }
                let target = (length & 0x3F) << 8 | Int(bytes[position + 1])
                jumps += 1
                // Backwards only: a pointer can never reach itself or anything after it.
                guard target < position, jumps <= Self.maximumJumps else { throw DNSError("a bad name pointer") }
                if resume == nil { resume = position + 2 }
                position = target
            default:
                throw DNSError("a label of an unknown kind")
            }
        }
    }

    private mutating func uint16() throws(DNSError) -> UInt16 {
        let pair = try take(2)
        return UInt16(pair[0]) << 8 | UInt16(pair[1])
    }

    private mutating func take(_ count: Int) throws(DNSError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw DNSError("the message ends early") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}
