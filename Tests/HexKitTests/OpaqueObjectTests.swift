import HexKit
import Testing

/// A `jmObject` that is not a hex is kept as compact raw JSON, wherever `jmObjectType` stands and
/// whether the object came as an object or stringified; a hex's text is never kept.
@Suite(.timeLimit(.minutes(5))) struct OpaqueObjectTests {
    private func raw(_ line: String) throws -> String? {
        guard case .opaque(let raw)? = try Envelope.decode(from: Array(line.utf8)).jmObject else { return nil }
        return raw.description
    }

    @Test func anObjectBeforeItsTypeIsKeptCompact() throws {
        let line =
            #"{"versionID":"1","operationType":"Sync","jmObject": { "a" : [ 1, "b c" ] , "d":{} },"#
            + #""jmObjectType":"F"}"#
        #expect(try raw(line) == #"{"a":[1,"b c"],"d":{}}"#)
    }

    @Test func aStringifiedObjectIsKeptCompactToo() throws {
        let line =
            #"{"versionID":"1","operationType":"Sync","jmObjectType":"F","#
            + #""jmObject":"{ \"a\" : [ 1 , \"é\" ] }"}"#
        #expect(try raw(line) == #"{"a":[1,"é"]}"#)
    }

    @Test func aHexIsReadAsAHexAndNotKeptAsText() throws {
        let line =
            #"{"versionID":"1","operationType":"Store","#
            + #""jmObject":{"senderName":"Ada","links":[{"url":"https://a.example"}]}}"#
        guard case .hex(let hex)? = try Envelope.decode(from: Array(line.utf8)).jmObject else {
            Issue.record("expected a hex")
            return
        }
        #expect(hex.senderName == "Ada" && hex.links?.first?.url == "https://a.example")
    }

    @Test func nonASCIIStringsAreCheckedAndASCIIOnesTakenAsTheyAre() throws {
        let valid = #"{"versionID":"1","operationType":"Alert","message":"café ☕ plain"}"#
        #expect(try Envelope.decode(from: Array(valid.utf8)).message == "café ☕ plain")
        var invalid = Array(#"{"versionID":"1","operationType":"Alert","message":"caf"#.utf8)
        invalid += [0xC3, 0x28] + Array(#""}"#.utf8)
        // Tolerant, as for a wrong type: a message that is not UTF-8 is no message.
        #expect(try Envelope.decode(from: invalid).message == nil)
    }
}
