import HexKit

/// A small, fast, seedable random number generator (SplitMix64), so a failing input can be
/// reproduced from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Generates envelope-like JSON lines together with what the tolerance rules say each one must
/// become: an independent model of Protocol.md's rules, written from the document, not from the
/// decoder.
struct RandomEnvelopeGenerator {
    /// What a generated line must do.
    enum Expected {
        case decodeError
        case alert
        case unsupported
        case invalid
        /// A Store of a hex; `hex` is the HexJM after the tolerance rules.
        case store(hex: HexJM, senderUUID: String?, messageID: String?)
        /// Bytes were mutated after generation: anything but a crash is acceptable.
        case anything
    }

    var random: SplitMix64
    /// Senders the test blocks, and message ids it reuses, so rejections and duplicates happen.
    let senderPool = (0..<6).map { _ in UUID().uuidString }
    let messageIDPool = (0..<3_000).map { _ in UUID().uuidString }

    /// Set when the current line nests past the reader's depth limit (512), which makes the
    /// whole line malformed JSON.
    private var nestsTooDeep = false

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    /// One line and its expected fate.
    mutating func next() -> (line: [UInt8], expected: Expected) {
        var fields: [(String, String)] = []
        var expected: Expected
        nestsTooDeep = false
        let version: (json: String?, value: String?) =
            chance(90)
            ? {
                let text = randomString()
                return (json(string: text), text)
            }() : stringField()
        let operation: (json: String, value: String?)
        if chance(95) {
            let name = ["Store", "Store", "Store", "Store", "Store", "Alert", "Ack", "Sync", "store"].randomElement(
                using: &random)!
            operation = (json(string: name), name)
        } else {
            operation = anyValue()
        }
        if let versionJSON = version.json, !chance(3) { fields.append(("versionID", versionJSON)) }
        if !chance(3) { fields.append(("operationType", operation.json)) }
        let versionPresent = fields.contains { $0.0 == "versionID" } && version.value != nil
        let operationValue = fields.contains { $0.0 == "operationType" } ? operation.value : nil

        let messageID: String? = chance(60) ? messageIDPool.randomElement(using: &random)! : nil
        if let messageID { fields.append(("messageID", json(string: messageID))) }
        if chance(30) { fields.append(("message", stringField().json ?? "null")) }

        let objectType: String? = chance(80) ? (chance(90) ? "Hex" : "Folder") : nil
        if let objectType { fields.append(("jmObjectType", json(string: objectType))) }
        let object: (json: String, hex: HexJM?, senderUUID: String?)? = chance(90) ? hexObject() : nil
        if let object { fields.append(("jmObject", object.json)) }
        for _ in 0..<Int.random(in: 0...3, using: &random) { fields.append((randomKey(), anyValue().json)) }
        fields.shuffle(using: &random)

        switch (versionPresent, operationValue) {
        case _ where nestsTooDeep, (false, _), (_, nil):
            expected = .decodeError
        case (true, "Alert"?):
            expected = .alert
        case (true, "Store"?):
            if let objectType, objectType != "Hex" {
                expected = .unsupported
            } else if let hex = object?.hex {
                expected = .store(hex: hex, senderUUID: object?.senderUUID, messageID: messageID)
            } else {
                expected = .invalid
            }
        default:
            expected = .unsupported
        }

        var line = Array(("{" + fields.map { json(string: $0.0) + ":" + $0.1 }.joined(separator: ",") + "}").utf8)
        if chance(5) {
            mutate(&line)
            expected = .anything
        }
        return (line, expected)
    }

    /// A jmObject: usually an object with hex fields of random types, sometimes not an object.
    private mutating func hexObject() -> (json: String, hex: HexJM?, senderUUID: String?) {
        guard chance(92) else { return (anyValue(objects: false).json, nil, nil) }
        var hex = HexJM()
        var fields: [(String, String)] = []
        let uuid =
            chance(70)
            ? (chance(50)
                ? senderPool.randomElement(using: &random)!.lowercased() : senderPool.randomElement(using: &random)!)
            : nil
        if let uuid, !chance(10) {
            fields.append(("senderUUID", json(string: uuid)))
            hex.senderUUID = uuid
        } else if chance(50) {
            let field = stringField()
            fields.append(("senderUUID", field.json ?? "null"))
            hex.senderUUID = field.value
        }
        for (key, path) in [
            ("senderName", \HexJM.senderName), ("hexDescription", \.hexDescription), ("hexColor", \.hexColor),
        ] where !chance(15) {
            let field = stringField()
            fields.append((key, field.json ?? "null"))
            hex[keyPath: path] = field.value
        }
        if !chance(10) {
            if chance(90) {
                var entries: [String] = []
                var links: [LinkJM] = []
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    if chance(85) {
                        let link = linkObject()
                        entries.append(link.json)
                        links.append(link.link)
                    } else {
                        entries.append(anyValue(objects: false).json)
                    }
                }
                fields.append(("links", "[" + entries.joined(separator: ",") + "]"))
                hex.links = links
            } else {
                // Not an array of links: an array of other values keeps none of them; any other
                // type counts as missing.
                let value = anyValue(objects: false).json
                fields.append(("links", value))
                hex.links = value.hasPrefix("[") ? [] : nil
            }
        }
        for _ in 0..<Int.random(in: 0...2, using: &random) { fields.append((randomKey(), anyValue().json)) }
        fields.shuffle(using: &random)
        return ("{" + fields.map { json(string: $0.0) + ":" + $0.1 }.joined(separator: ",") + "}", hex, hex.senderUUID)
    }

    private mutating func linkObject() -> (json: String, link: LinkJM) {
        var link = LinkJM()
        var fields: [(String, String)] = []
        for key in ["url", "linkDescription", "service"] where !chance(15) {
            let field =
                key == "service" && chance(60)
                ? {
                    let name = ["Unknown", "Dropbox", "Box", "GoogleDrive", "OneDrive", ""].randomElement(
                        using: &random)!
                    return (json: json(string: name), value: Optional(name))
                }()
                : stringField()
            fields.append((key, field.json ?? "null"))
            switch key {
            case "url": link.url = field.value
            case "linkDescription": link.linkDescription = field.value
            default: link.service = field.value.map(Service.init(rawValue:))
            }
        }
        if chance(20) { fields.append((randomKey(), anyValue().json)) }
        fields.shuffle(using: &random)
        return ("{" + fields.map { json(string: $0.0) + ":" + $0.1 }.joined(separator: ",") + "}", link)
    }

    /// A value for a string field and what the rules read from it: a string (most often), a
    /// number (read as its text), or something of another type (read as missing). `json` is nil
    /// when the key is to be left out.
    private mutating func stringField() -> (json: String?, value: String?) {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<70:
            let text = randomString()
            return (json(string: text), text)
        case 70..<80:
            let number = Int64.random(in: -1_000_000...1_000_000, using: &random)
            return ("\(number)", "\(number)")
        case 80..<82:
            let number = Double(Int.random(in: -400...400, using: &random)) + 0.5
            return ("\(number)", "\(number)")
        case 82..<84:
            return Self.extremeNumbers.randomElement(using: &random)!
        case 84..<90:
            return ("null", nil)
        case 90..<95:
            return (nil, nil)
        default:
            return (anyValue(strings: false, numbers: false).json, nil)
        }
    }

    /// Numbers at the edges of every numeric type, as written on the wire, with the text the
    /// tolerance rules make of them (nil: too large for a Double, so read as missing).
    static let extremeNumbers: [(json: String?, value: String?)] = [
        ("0", "0"), ("-0", "0"), ("0.5", "0.5"), ("-1", "-1"), ("1e300", "1e+300"), ("-1e300", "-1e+300"),
        ("1e400", nil), ("-1e400", nil),
        ("9223372036854775807", "9223372036854775807"), ("-9223372036854775808", "-9223372036854775808"),
        ("9223372036854775808", "9.223372036854776e+18"), ("18446744073709551616", "1.8446744073709552e+19"),
        ("4.9e-324", "5e-324"),
    ]

    /// Any JSON value (the value is only known when it is a string or a number).
    private mutating func anyValue(objects: Bool = true, strings: Bool = true, numbers: Bool = true) -> (
        json: String, value: String?
    ) {
        var choices = ["true", "false", "null", "array", "deep"]
        if objects { choices.append("object") }
        if strings { choices.append("string") }
        if numbers { choices.append("number") }
        switch choices.randomElement(using: &random)! {
        case "array":
            return (
                "["
                    + (0..<Int.random(in: 0...3, using: &random)).map { _ in anyValue(objects: false).json }.joined(
                        separator: ",") + "]", nil
            )
        case "object": return ("{" + json(string: randomKey()) + ":" + anyValue(objects: false).json + "}", nil)
        case "deep":
            // Within the reader's depth limit, or past it, anywhere up to 1,100 levels (the
            // envelope around the value adds a few levels, so the limit itself is left to
            // NestingTests, which tries every depth at every place).
            let depth =
                chance(97) ? Int.random(in: 1...480, using: &random) : Int.random(in: 530...1_100, using: &random)
            nestsTooDeep = nestsTooDeep || depth > 480
            return (String(repeating: "[", count: depth) + String(repeating: "]", count: depth), nil)
        case "string":
            let text = randomString()
            return (json(string: text), text)
        case "number":
            let number = Int.random(in: -99...99, using: &random)
            return ("\(number)", "\(number)")
        case let literal: return (literal, nil)
        }
    }

    private mutating func randomKey() -> String {
        chance(50)
            ? ["priority", "tags", "route", "capabilities", "Version", "x"].randomElement(using: &random)!
            : randomString(maximumLength: 12)
    }

    /// ASCII, accented, CJK, emoji, control characters and quotes; sometimes very long.
    private mutating func randomString(maximumLength: Int = 40) -> String {
        let alphabets: [[Character]] = [
            Array("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789#-_./:?=&"),
            Array("éüñßøÅçœ"), Array("中文日本語한국어"), Array("🚀👩‍💻🇫🇷🙂"),
            ["\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{2028}"],
        ]
        let length =
            chance(2)
            ? Int.random(in: 1_000...20_000, using: &random) : Int.random(in: 0...maximumLength, using: &random)
        var text = ""
        text.reserveCapacity(length)
        for _ in 0..<length {
            let alphabet = chance(80) ? alphabets[0] : alphabets.randomElement(using: &random)!
            text.append(alphabet.randomElement(using: &random)!)
        }
        return text
    }

    /// A JSON string literal for `text`, escaped by hand the way JSON allows.
    private func json(string text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "/": out += "\\/"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Damages the bytes: a cut, a flipped byte, stray bytes, or a doubled fragment.
    private mutating func mutate(_ line: inout [UInt8]) {
        guard !line.isEmpty else { return }
        let index = Int.random(in: 0..<line.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: line.removeSubrange(index...)
        case 1: line[index] ^= UInt8.random(in: 1...255, using: &random)
        case 2: line.insert(contentsOf: [0xFF, 0x00, UInt8(ascii: "\"")], at: index)
        default: line.insert(contentsOf: line[index...].prefix(32), at: index)
        }
    }
}
