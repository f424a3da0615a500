/// Writes DNS messages, compressing every name against the names written before it.
struct DNSWriter {
    private(set) var bytes: [UInt8] = []
    /// Where each name suffix written so far starts, while that is within a pointer's reach.
    private var suffixes: [DNSName: Int] = [:]
    /// Whether names are compressed at all: not where bytes are compared rather than sent.
    private let compresses: Bool

    init(compressing: Bool = true) {
        compresses = compressing
    }

    mutating func write(_ message: DNSMessage) {
        uint16(message.id)
        uint16(message.flags)
        for count in [
            message.questions.count, message.answers.count, message.authorities.count,
            message.additionals.count,
        ] {
            uint16(UInt16(clamping: count))
        }
        for question in message.questions {
            name(question.name)
            uint16(question.type)
            uint16(question.recordClass | (question.unicastResponse ? DNSClass.topBit : 0))
        }
        for record in message.answers + message.authorities + message.additionals { write(record) }
    }

    private mutating func write(_ record: DNSRecord) {
        name(record.name)
        uint16(record.type)
        uint16(record.recordClass | (record.cacheFlush ? DNSClass.topBit : 0))
        uint16(UInt16(truncatingIfNeeded: record.ttl >> 16))
        uint16(UInt16(truncatingIfNeeded: record.ttl))
        let lengthAt = bytes.count
        uint16(0)
        data(record.data)
        let length = UInt16(clamping: bytes.count - lengthAt - 2)
        bytes[lengthAt] = UInt8(length >> 8)
        bytes[lengthAt + 1] = UInt8(length & 0xFF)
    }

    /// Writes a record's data alone: its RDATA.
    mutating func data(_ data: DNSRecordData) {
        switch data {
        case .a(let address), .aaaa(let address):
            bytes += address
        case .ptr(let target):
            name(target)
        case .srv(let priority, let weight, let port, let target):
            uint16(priority)
            uint16(weight)
            uint16(port)
            // RFC 2782 asks for no compression of the target; mDNS (RFC 6762, 18.14) allows it,
            // and some readers still expect none.
            name(target, compressing: false)
        case .txt(let strings):
            // An empty TXT record is one empty string (RFC 6763, section 6.1).
            for string in strings.isEmpty ? [[]] : strings {
                let cut = string.prefix(255)
                bytes.append(UInt8(cut.count))
                bytes += cut
            }
        case .nsec(let next, let types):
            name(next, compressing: false)
            // One bitmap per window of 256 types, in order (RFC 4034, section 4.1.2).
            for window in Set(types.map { $0 >> 8 }).sorted() {
                var bitmap = [UInt8](repeating: 0, count: 32)
                for type in types where type >> 8 == window {
                    let low = Int(type & 0xFF)
                    bitmap[low / 8] |= UInt8(0x80) >> UInt8(low % 8)
                }
                let used = (bitmap.lastIndex { $0 != 0 } ?? 0) + 1
                bytes += [UInt8(window), UInt8(used)] + bitmap.prefix(used)
            }
        case .other(_, let data):
            bytes += data
        }
    }

    private mutating func name(_ name: DNSName, compressing: Bool = true) {
        var labels = name.labels[...]
        while !labels.isEmpty {
            // A suffix is a whole, valid name: the labels of a valid one.
            if compresses, let suffix = try? DNSName(labels: Array(labels)) {
                if compressing, let start = suffixes[suffix] {
                    uint16(0xC000 | UInt16(start))
                    return
                }
                if bytes.count < 0x3FFF { suffixes[suffix] = bytes.count }
            }
            let label = labels.removeFirst()
            bytes.append(UInt8(label.count))
            bytes += label
        }
        bytes.append(0)
    }

    private mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }
}
