import HexJSON

extension Envelope {
    /// Reads one envelope from the bytes of one line (without its line ending), in one pass.
    ///
    /// The tolerance rules of Protocol.md live here and in `EnvelopeReader`, nowhere else.
    /// - Throws: `EnvelopeDecodingError`, and only that: the bytes are not JSON, not an object,
    ///   lack `versionID` or `operationType`, or exceed `limits`. Every other shape decodes.
    public static func decode(from bytes: some Collection<UInt8>, limits: EnvelopeLimits = .default)
        throws(EnvelopeDecodingError) -> Self
    {
        let result: Result<Self, EnvelopeDecodingError>
        do {
            result = try JSONScanner.scan(bytes, limits: limits.json) { scanner throws(JSONError) in
                guard try scanner.peekKind() == .object else {
                    try scanner.skipValue()
                    try scanner.expectEnd()
                    return .failure(.notAnObject)
                }
                var reader = EnvelopeReader(limits: limits)
                let envelope = try reader.envelope(&scanner)
                try scanner.expectEnd()
                return envelope
            }
        } catch {
            throw .malformedJSON
        }
        return try result.get()
    }
}

extension HexJM {
    /// Reads a HexJM written by a person or a script (`hexctl send --file`) by the same tolerance
    /// rules as a peer's; nil when the JSON is not an object.
    /// - Throws: `EnvelopeDecodingError.malformedJSON` or `.exceedsLimit`.
    public static func decode(from bytes: some Collection<UInt8>, limits: EnvelopeLimits = .default)
        throws(EnvelopeDecodingError) -> HexJM?
    {
        try EnvelopeReader.readWhole(bytes, limits: limits) { reader, scanner throws(JSONError) in
            try reader.hex(&scanner)
        }
    }
}

extension LinkJM {
    /// Reads a JSON array of links by the tolerance rules (entries that are not objects are
    /// dropped); nil when the JSON is not an array.
    /// - Throws: `EnvelopeDecodingError.malformedJSON` or `.exceedsLimit`.
    public static func decodeList(from bytes: some Collection<UInt8>, limits: EnvelopeLimits = .default)
        throws(EnvelopeDecodingError) -> [LinkJM]?
    {
        try EnvelopeReader.readWhole(bytes, limits: limits) { reader, scanner throws(JSONError) in
            try reader.links(&scanner)
        }
    }
}

/// The tolerance rules, applied while the scanner walks an envelope:
/// - extra keys are skipped (validated, not kept), at every level;
/// - a missing key, `null`, or a value of the wrong type leaves the field nil;
/// - a number where a string belongs becomes its decimal text (`JSONNumber.decimalText`);
/// - a string that is not valid Unicode counts as a value of the wrong type;
/// - entries of `links` that are not objects are dropped;
/// - a `jmObject` that is a string holding a JSON object ("stringified", as the original app's
///   notes describe) is read as that object;
/// - the last of two equal keys wins.
///
/// Limits are checked as values are read, so an over-long string is never decoded and links past
/// the maximum are never kept; the first limit passed is remembered and reported once the whole
/// line has been checked (so the `messageID`, wherever it stands, can still be answered).
struct EnvelopeReader {
    let limits: EnvelopeLimits
    /// The first limit passed, in words.
    private(set) var exceeded: String?

    init(limits: EnvelopeLimits) {
        self.limits = limits
    }

    /// Reads a whole text with `read`, mapping errors as the public readers promise.
    static func readWhole<T>(
        _ bytes: some Collection<UInt8>, limits: EnvelopeLimits,
        _ read: (inout EnvelopeReader, inout JSONScanner) throws(JSONError) -> T?
    ) throws(EnvelopeDecodingError) -> T? {
        let result: Result<T?, EnvelopeDecodingError>
        do {
            result = try JSONScanner.scan(bytes, limits: limits.json) { scanner throws(JSONError) in
                var reader = EnvelopeReader(limits: limits)
                let value = try read(&reader, &scanner)
                try scanner.expectEnd()
                if let exceeded = reader.exceeded { return .failure(.exceedsLimit(exceeded, messageID: nil)) }
                return .success(value)
            }
        } catch {
            throw .malformedJSON
        }
        return try result.get()
    }

    /// The envelope object at the scanner, or why it is not one.
    mutating func envelope(_ scanner: inout JSONScanner) throws(JSONError) -> Result<Envelope, EnvelopeDecodingError> {
        var versionID: String?
        var operationType: String?
        var message: String?
        var jmObjectType: String?
        var messageID: String?
        var status: String?
        var hexID: String?
        var jmObject: JMObjectCandidate?
        try scanner.readObject { scanner, key throws(JSONError) in
            if scanner.token(key, is: "versionID") {
                versionID = try string(&scanner, field: "versionID")
            } else if scanner.token(key, is: "operationType") {
                operationType = try string(&scanner, field: "operationType")
            } else if scanner.token(key, is: "message") {
                message = try string(&scanner, field: "message")
            } else if scanner.token(key, is: "jmObjectType") {
                jmObjectType = try string(&scanner, field: "jmObjectType")
            } else if scanner.token(key, is: "jmObject") {
                jmObject = try jmObjectCandidate(&scanner)
            } else if scanner.token(key, is: "messageID") {
                messageID = try string(&scanner, field: "messageID")
            } else if scanner.token(key, is: "status") {
                status = try string(&scanner, field: "status")
            } else if scanner.token(key, is: "hexID") {
                hexID = try string(&scanner, field: "hexID")
            } else {
                try scanner.skipValue()
            }
        }
        if let exceeded { return .failure(.exceedsLimit(exceeded, messageID: messageID)) }
        guard let versionID else { return .failure(.missingKey("versionID", messageID: messageID)) }
        guard let operationType else { return .failure(.missingKey("operationType", messageID: messageID)) }

        let operation = OperationType(rawValue: operationType)
        let objectType = jmObjectType.map(JMObjectType.init(rawValue:))
        // A Store without jmObjectType carries a Hex: the only object a Store ever carried.
        let object: JMObject?
        if (objectType ?? (operation == .store ? .hex : nil)) == .hex {
            if let exceeded = jmObject?.exceeded { return .failure(.exceedsLimit(exceeded, messageID: messageID)) }
            object = jmObject?.hex.map(JMObject.hex)
        } else {
            object = jmObject.map { JMObject.opaque($0.rawJSON(in: scanner)) }
        }
        return .success(
            Envelope(
                versionID: versionID, operationType: operation, message: message, jmObjectType: objectType,
                jmObject: object,
                messageID: messageID, status: status.map(AckStatus.init(rawValue:)), hexID: hexID))
    }

    /// A `jmObject` read both ways at once, before `jmObjectType` (which may come later in the
    /// line) says which one counts: as a HexJM, and as raw JSON to keep unread.
    struct JMObjectCandidate {
        var hex: HexJM?
        var raw: Raw
        /// A limit the object passes when read as a hex.
        var exceeded: String?

        /// The object's text: compacted already, or where it stands in the line, compacted only
        /// when it is not taken as a hex (a 100,000-link hex would be copied byte by byte for
        /// nothing).
        enum Raw {
            case compacted(RawJSON)
            case range(Range<Int>)
        }

        /// The object as raw JSON; `scanner` is the one it was read from.
        func rawJSON(in scanner: JSONScanner) -> RawJSON {
            switch raw {
            case .compacted(let json): json
            case .range(let range): RawJSON(compacted: scanner.compactBytes(range))
            }
        }
    }

    /// The object at the scanner, also when stringified; nil for any other value.
    private func jmObjectCandidate(_ scanner: inout JSONScanner) throws(JSONError) -> JMObjectCandidate? {
        switch try scanner.peekKind() {
        case .object:
            let start = scanner.position
            var reader = EnvelopeReader(limits: limits)
            let hex = try reader.hex(&scanner)
            return JMObjectCandidate(hex: hex, raw: .range(start..<scanner.position), exceeded: reader.exceeded)
        case .string:
            let token = try scanner.readStringToken()
            guard let inner = scanner.unescapedBytes(token) else { return nil }
            return try? JSONScanner.scan(inner, limits: limits.json) { inner throws(JSONError) -> JMObjectCandidate? in
                guard try inner.peekKind() == .object, var candidate = try jmObjectCandidate(&inner) else { return nil }
                try inner.expectEnd()
                // The inner text goes away with this scan.
                candidate.raw = .compacted(candidate.rawJSON(in: inner))
                return candidate
            }
        default:
            try scanner.skipValue()
            return nil
        }
    }

    /// A HexJM at the scanner; nil (and the value skipped) when it is not an object.
    mutating func hex(_ scanner: inout JSONScanner) throws(JSONError) -> HexJM? {
        guard try scanner.peekKind() == .object else {
            try scanner.skipValue()
            return nil
        }
        var hex = HexJM()
        try scanner.readObject { scanner, key throws(JSONError) in
            if scanner.token(key, is: "senderUUID") {
                hex.senderUUID = try string(&scanner, field: "senderUUID")
            } else if scanner.token(key, is: "senderName") {
                hex.senderName = try string(&scanner, field: "senderName")
            } else if scanner.token(key, is: "hexDescription") {
                hex.hexDescription = try string(&scanner, field: "hexDescription")
            } else if scanner.token(key, is: "hexColor") {
                hex.hexColor = try string(&scanner, field: "hexColor")
            } else if scanner.token(key, is: "links") {
                hex.links = try links(&scanner)
            } else {
                try scanner.skipValue()
            }
        }
        return hex
    }

    /// The link objects of an array, in order; nil (and the value skipped) when it is not an array.
    mutating func links(_ scanner: inout JSONScanner) throws(JSONError) -> [LinkJM]? {
        guard try scanner.peekKind() == .array else {
            try scanner.skipValue()
            return nil
        }
        var links: [LinkJM] = []
        var count = 0
        try scanner.readArray { scanner throws(JSONError) in
            guard try scanner.peekKind() == .object else {
                try scanner.skipValue()
                return
            }
            count += 1
            guard count <= limits.maximumLinks else {
                exceed("more than \(limits.maximumLinks) links")
                try scanner.skipValue()
                return
            }
            links.append(try link(&scanner))
        }
        return links
    }

    private mutating func link(_ scanner: inout JSONScanner) throws(JSONError) -> LinkJM {
        var link = LinkJM()
        try scanner.readObject { scanner, key throws(JSONError) in
            if scanner.token(key, is: "url") {
                link.url = try string(&scanner, field: "url")
            } else if scanner.token(key, is: "linkDescription") {
                link.linkDescription = try string(&scanner, field: "linkDescription")
            } else if scanner.token(key, is: "service") {
                link.service = try string(&scanner, field: "service").map(Service.init(rawValue:))
            } else {
                try scanner.skipValue()
            }
        }
        return link
    }

    /// A string field: a string, or a number as its decimal text; nil for anything else.
    private mutating func string(_ scanner: inout JSONScanner, field: StaticString) throws(JSONError) -> String? {
        switch try scanner.peekKind() {
        case .string:
            let token = try scanner.readStringToken()
            guard token.encodedLength <= limits.maximumStringBytes else {
                exceed("\(field) is \(token.encodedLength) bytes, more than \(limits.maximumStringBytes)")
                return nil
            }
            return scanner.string(token)
        case .number:
            let number = try scanner.readNumber()
            guard number.text.utf8.count <= limits.maximumStringBytes else {
                exceed(
                    "\(field) is a number of \(number.text.utf8.count) digits, more than \(limits.maximumStringBytes)")
                return nil
            }
            return number.decimalText
        default:
            try scanner.skipValue()
            return nil
        }
    }

    private mutating func exceed(_ reason: String) {
        if exceeded == nil { exceeded = reason }
    }
}
