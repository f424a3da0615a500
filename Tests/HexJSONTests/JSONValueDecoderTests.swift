import FoundationEssentials
import HexJSON
import Testing

@Suite(.timeLimit(.minutes(5))) struct JSONValueDecoderTests {
    private struct Sample: Decodable, Equatable {
        var port: UInt16
        var interval: Double
        var name: String
        var tags: [String]
        var since: UInt64?
        var when: Date?
        var nested: [String: Int]?
    }

    private func decode(_ text: String) throws -> Sample {
        try JSONValueDecoder().decode(Sample.self, from: Array(text.utf8))
    }

    @Test func aWellFormedValueDecodes() throws {
        let sample = try decode(
            #"{"port":18521,"interval":2.5,"name":"Ada","tags":["a","b"],"since":18446744073709551615,"#
                + #""when":"2026-11-22T03:10:00Z","nested":{"x":1},"extra":[1]}"#
        )
        #expect(sample.port == 18_521 && sample.interval == 2.5 && sample.name == "Ada" && sample.tags == ["a", "b"])
        #expect(sample.since == .max)
        #expect(sample.when == Date(timeIntervalSince1970: 1_795_317_000))
        #expect(sample.nested == ["x": 1])
    }

    @Test(arguments: [
        "0.5", "-1", "65536", "1e300", "-1e300", "9223372036854775808", "18446744073709551616", #""18521""#, "null",
        "true",
    ])
    func aNumberThatDoesNotFitIsATypeMismatchNotATrap(_ port: String) {
        #expect(throws: DecodingError.self) { try decode(#"{"port":\#(port),"interval":1,"name":"x","tags":[]}"#) }
    }

    @Test func aMissingKeyAndAWrongTypeAreDecodingErrors() {
        #expect(throws: DecodingError.self) { try decode(#"{"interval":1,"name":"x","tags":[]}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"port":1,"interval":1,"name":7,"tags":[]}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"port":1,"interval":1,"name":"x","tags":"a"}"#) }
        #expect(throws: DecodingError.self) {
            try decode(#"{"port":1,"interval":1,"name":"x","tags":[],"when":"yesterday"}"#)
        }
        #expect(throws: DecodingError.self) { try decode(#"[1]"#) }
    }

    @Test func textThatIsNotJSONIsAJSONError() {
        #expect(throws: JSONError.self) { try decode(#"{"port":1"#) }
        #expect(throws: JSONError.self) { try decode(String(repeating: "[", count: 513)) }
    }
}
