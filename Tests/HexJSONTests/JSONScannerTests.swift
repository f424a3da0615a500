import HexJSON
import Testing

@Suite(.timeLimit(.minutes(5))) struct JSONScannerTests {
    private func validate(_ text: String) throws(JSONError) {
        try validate(Array(text.utf8))
    }

    private func validate(_ bytes: [UInt8]) throws(JSONError) {
        try JSONScanner.scan(bytes) { scanner throws(JSONError) in
            try scanner.skipValue()
            try scanner.expectEnd()
        }
    }

    @Test(arguments: [
        "{}", "[]", "0", "-0", "1.5e+10", "-12.25E-3", "true", "false", "null", #""""#,
        #""a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE80""#,
        #" { "a" : [ 1 , { "b" : null } , "c" ] , "d" : { } } "#, "[[[]]]", #"{"a":{"b":{"c":[true,false]}}}"#,
        "\t\r\n 7 \n",
    ])
    func validTextsAreRead(_ text: String) throws {
        try validate(text)
    }

    @Test(arguments: [
        ("", JSONError.Reason.unexpectedEnd), ("   ", .unexpectedEnd), ("[1,]", .unexpectedCharacter),
        ("[1 2]", .unexpectedCharacter),
        ("{\"a\" 1}", .unexpectedCharacter), ("{\"a\":1,}", .unexpectedCharacter), ("{a:1}", .unexpectedCharacter),
        ("{\"a\":}", .unexpectedCharacter),
        ("01", .trailingCharacters), ("1.", .invalidNumber), ("1e", .invalidNumber), ("-", .unexpectedEnd),
        ("-a", .invalidNumber), (".5", .unexpectedCharacter),
        ("+1", .unexpectedCharacter), ("0x10", .trailingCharacters), ("NaN", .unexpectedCharacter),
        ("Infinity", .unexpectedCharacter),
        ("tru", .unexpectedEnd), ("nul", .unexpectedEnd), ("truth", .unexpectedCharacter), ("[", .unexpectedEnd),
        ("{", .unexpectedEnd), ("[1", .unexpectedEnd),
        ("\"abc", .unexpectedEnd), ("\"a\\x\"", .invalidEscape), ("\"\\u12G4\"", .invalidEscape),
        ("\"\\u12", .unexpectedEnd),
        ("\"a\u{01}b\"", .controlCharacterInString), ("\"tab\there\"", .controlCharacterInString),
        ("1 2", .trailingCharacters), ("{} {}", .trailingCharacters),
        ("]", .unexpectedCharacter), ("[}", .unexpectedCharacter), ("{]", .unexpectedCharacter),
        ("'a'", .unexpectedCharacter),
    ])
    func invalidTextsAreTypedErrors(_ text: String, _ reason: JSONError.Reason) {
        #expect { try validate(text) } throws: { ($0 as? JSONError)?.reason == reason }
    }

    @Test func everyTruncationOfAValidTextIsAnErrorNotATrap() throws {
        let text = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n"],"b":{"c":{}}}"#.utf8)
        try validate(text)
        for length in 0..<text.count {
            #expect(throws: JSONError.self) { try validate(Array(text.prefix(length))) }
        }
    }

    @Test func depthIsLimitedAtTheBoundaryWithoutRecursion() throws {
        let limit = JSONLimits.defaultMaximumDepth
        for (open, close) in [("[", "]"), (#"{"k":"#, "}")] {
            func nested(_ depth: Int) -> [UInt8] {
                Array((String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
            }
            try validate(nested(limit))
            #expect { try validate(nested(limit + 1)) } throws: { ($0 as? JSONError)?.reason == .tooDeep }
            // A million levels: a recursive reader would have overflowed its stack long before.
            #expect { try validate(nested(1_000_000)) } throws: { ($0 as? JSONError)?.reason == .tooDeep }
        }
        #expect { try validate(Array(repeating: UInt8(ascii: "["), count: 513)) } throws: {
            ($0 as? JSONError)?.reason == .tooDeep
        }
    }

    @Test func aLowerDepthLimitIsKept() throws {
        let shallow = JSONLimits(maximumDepth: 2)
        #expect(throws: Never.self) {
            try JSONScanner.scan(Array("[[1]]".utf8), limits: shallow) { scanner throws(JSONError) in
                try scanner.skipValue()
            }
        }
        #expect(throws: JSONError.self) {
            try JSONScanner.scan(Array("[[[1]]]".utf8), limits: shallow) { scanner throws(JSONError) in
                try scanner.skipValue()
            }
        }
        #expect(throws: JSONError.self) { try JSONValue.parse(Array(String(repeating: "[", count: 65).utf8)) }
    }

    @Test func stringsDecodeEscapesAndSurrogatePairs() throws {
        let value = try JSONValue.parse(
            Array(#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2d\uD83D\uDE80", "\u0000x", "é"]"#.utf8))
        #expect(
            value
                == .array([
                    .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"), .string("é中🚀"), .string("\u{0}x"), .string("é"),
                ]))
    }

    @Test(arguments: [#""\uD800""#, #""\uDC00""#, #""\uD800\u0041""#, #""\uD83Dx""#])
    func anUnpairedSurrogateIsNotAString(_ text: String) throws {
        try validate(text)  // valid syntax
        let decoded = try JSONScanner.scan(Array(text.utf8)) { scanner throws(JSONError) in try scanner.readString() }
        #expect(decoded == nil)
        #expect { try JSONValue.parse(Array(text.utf8)) } throws: { ($0 as? JSONError)?.reason == .invalidUnicode }
    }

    @Test(arguments: [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] as [[UInt8]])
    func bytesThatAreNotUTF8AreNotAString(_ bad: [UInt8]) throws {
        let text = [UInt8(ascii: "\"")] + bad + [UInt8(ascii: "\"")]
        try validate(text)
        let decoded = try JSONScanner.scan(text) { scanner throws(JSONError) in try scanner.readString() }
        #expect(decoded == nil)
    }

    @Test func keysCompareWithEscapesResolved() throws {
        let matches = try JSONScanner.scan(Array(#"{"url":1,"u\u0072l":2,"urls":3,"":4}"#.utf8)) {
            scanner throws(JSONError) in
            var matches: [Bool] = []
            try scanner.readObject { scanner, key throws(JSONError) in
                matches.append(scanner.token(key, is: "url"))
                try scanner.skipValue()
            }
            return matches
        }
        #expect(matches == [true, true, false, false])
    }

    @Test func compactBytesDropWhiteSpaceOutsideStringsOnly() throws {
        let text = Array(" { \"a b\" : [ 1 ,\n \"c\\\" d\" ] } ".utf8)
        let compact = try JSONScanner.scan(text) { scanner throws(JSONError) in
            let range = try scanner.skipValue()
            return scanner.compactBytes(range)
        }
        #expect(String(decoding: compact, as: UTF8.self) == #"{"a b":[1,"c\" d"]}"#)
    }

    @Test func aDuplicateKeyReadsAsItsLastValue() throws {
        guard case .object(let object) = try JSONValue.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8)) else {
            Issue.record("not an object")
            return
        }
        let three = try number("3")
        #expect(object["a"] == three.map(JSONValue.number))
        #expect(object.keys == ["a", "b"])
    }

    private func number(_ text: String) throws -> JSONNumber? {
        guard case .number(let number) = try JSONValue.parse(Array(text.utf8)) else { return nil }
        return number
    }
}
