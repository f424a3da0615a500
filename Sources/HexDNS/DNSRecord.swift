/// The record types hexd reads and writes (RFC 1035, 2782, 3596, 4034, 6762).
public enum DNSType {
    public static let a: UInt16 = 1
    public static let ptr: UInt16 = 12
    public static let txt: UInt16 = 16
    public static let aaaa: UInt16 = 28
    public static let srv: UInt16 = 33
    public static let nsec: UInt16 = 47
    /// In a question only: every type.
    public static let any: UInt16 = 255
}

/// The Internet class; mDNS uses its top bit for "cache flush" in records and "unicast response"
/// in questions (RFC 6762, sections 10.2 and 5.4).
public enum DNSClass {
    public static let internet: UInt16 = 1
    static let topBit: UInt16 = 0x8000
}

/// A question: a name, a type, and whether a unicast answer is asked for (mDNS's QU bit).
public struct DNSQuestion: Sendable, Equatable {
    public var name: DNSName
    public var type: UInt16
    public var unicastResponse: Bool
    public var recordClass: UInt16

    public init(name: DNSName, type: UInt16, unicastResponse: Bool = false, recordClass: UInt16 = DNSClass.internet) {
        self.name = name
        self.type = type
        self.unicastResponse = unicastResponse
        self.recordClass = recordClass
    }

    /// Whether `record` answers this question.
    public func isAnswered(by record: DNSRecord) -> Bool {
        record.name == name && (type == DNSType.any || type == record.type)
    }
}

/// What a record holds, by type; types hexd does not read keep their bytes.
public enum DNSRecordData: Sendable, Hashable {
    case a([UInt8])
    case aaaa([UInt8])
    case ptr(DNSName)
    case srv(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName)
    /// The strings, each at most 255 bytes.
    case txt([[UInt8]])
    /// The next name and the types that exist for the record's name, in order.
    case nsec(next: DNSName, types: [UInt16])
    case other(type: UInt16, bytes: [UInt8])

    public var type: UInt16 {
        switch self {
        case .a: DNSType.a
        case .aaaa: DNSType.aaaa
        case .ptr: DNSType.ptr
        case .srv: DNSType.srv
        case .txt: DNSType.txt
        case .nsec: DNSType.nsec
        case .other(let type, _): type
        }
    }
}

/// A resource record.
public struct DNSRecord: Sendable, Equatable {
    public var name: DNSName
    public var data: DNSRecordData
    /// Seconds it may be cached; 0 in a goodbye.
    public var ttl: UInt32
    /// mDNS's cache-flush bit: this is the whole set of records of this name and type.
    public var cacheFlush: Bool
    public var recordClass: UInt16

    public init(
        name: DNSName, data: DNSRecordData, ttl: UInt32, cacheFlush: Bool = false,
        recordClass: UInt16 = DNSClass.internet
    ) {
        self.name = name
        self.data = data
        self.ttl = ttl
        self.cacheFlush = cacheFlush
        self.recordClass = recordClass
    }

    public var type: UInt16 { data.type }

    /// The same record with another TTL (0 for a goodbye).
    public func with(ttl: UInt32) -> DNSRecord {
        var copy = self
        copy.ttl = ttl
        return copy
    }

    /// Whether it holds the same data for the same name (TTL and cache-flush bit aside).
    public func isSameRecord(as other: DNSRecord) -> Bool {
        name == other.name && data == other.data
    }

    /// What tells the record from another (`isSameRecord`): its name and data, not its TTL; to look
    /// records up in a set rather than compare them pair by pair.
    public struct Identity: Hashable, Sendable {
        public let name: DNSName
        public let data: DNSRecordData
    }

    public var identity: Identity { Identity(name: name, data: data) }
}

extension DNSRecordData {
    /// The TXT strings of DNS-SD (RFC 6763, section 6) as keys and values: `key=value`, a key
    /// alone, keys compared without case; the first of a repeated key counts.
    public static func txt(_ pairs: KeyValuePairs<String, String>) -> DNSRecordData {
        .txt(pairs.map { Array("\($0.key)=\($0.value)".utf8) })
    }

    /// The DNS-SD keys and values of a TXT record's strings; nil for another type.
    public var keyValues: [String: String]? {
        guard case .txt(let strings) = self else { return nil }
        var values: [String: String] = [:]
        for string in strings {
            let parts = string.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = parts.first, !key.isEmpty else { continue }
            let name = String(decoding: key, as: UTF8.self).lowercased()
            if values[name] == nil {
                values[name] = parts.count == 2 ? String(decoding: parts[1], as: UTF8.self) : ""
            }
        }
        return values
    }
}
