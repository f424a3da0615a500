import HexKit
import Testing

/// One test per tolerance rule of Protocol.md ("Tolerant decoding").
@Suite(.timeLimit(.minutes(5))) struct ToleranceRuleTests {
    private func decode(_ json: String) throws -> Envelope {
        try Envelope.decode(from: Array(json.utf8))
    }

    private func hex(_ hexObject: String) throws -> HexJM {
        try #require(
            try decode(
                #"{"versionID":"1.0","operationType":"Store","jmObjectType":"Hex","jmObject":"# + hexObject + "}"
            ).hex)
    }

    @Test func extraKeysAreIgnoredAtEveryLevel() throws {
        let envelope = try decode(
            #"""
            {"versionID":"9","operationType":"Store","new":1,"jmObjectType":"Hex",\#
            "jmObject":{"senderName":"A","more":{"x":[1]},
             "links":[{"url":"u","service":"Box","size":3,"meta":{"deep":[{"deeper":true}]}}]}}
            """#)
        #expect(envelope.hex == HexJM(senderName: "A", links: [LinkJM(url: "u", service: .box)]))
    }

    @Test func missingKeysAreNil() throws {
        #expect(try hex("{}") == HexJM())
        #expect(try hex(#"{"links":[{}]}"#).links == [LinkJM()])
        let envelope = try decode(#"{"versionID":"1.0","operationType":"Alert"}"#)
        #expect(
            envelope.message == nil && envelope.messageID == nil && envelope.jmObject == nil
                && envelope.jmObjectType == nil)
    }

    @Test func nullKeysAreTreatedAsMissing() throws {
        #expect(
            try hex(#"{"senderUUID":null,"senderName":null,"hexDescription":null,"hexColor":null,"links":null}"#)
                == HexJM())
        #expect(try hex(#"{"links":[{"url":null,"linkDescription":null,"service":null}]}"#).links == [LinkJM()])
        #expect(
            try decode(#"{"versionID":"1","operationType":"Alert","message":null,"messageID":null}"#).message == nil)
    }

    @Test(arguments: [("42", "42"), ("-7", "-7"), ("1.5", "1.5"), ("1.0", "1"), ("1e3", "1000"), ("2.5e-1", "0.25")])
    func numbersBecomeStrings(json: String, text: String) throws {
        #expect(try hex(#"{"senderName":\#(json)}"#).senderName == text)
        #expect(try hex(#"{"links":[{"url":\#(json)}]}"#).links?.first?.url == text)
        #expect(try decode(#"{"versionID":\#(json),"operationType":"Alert"}"#).versionID == text)
    }

    @Test func nonObjectLinkEntriesAreDropped() throws {
        let links = try hex(
            #"{"links":[1,"two",null,true,[{"url":"in an array"}],{"url":"kept"},{"url":"also kept"}]}"#
        ).links
        #expect(links == [LinkJM(url: "kept"), LinkJM(url: "also kept")])
    }

    @Test(arguments: [#"true"#, #"{"a":1}"#, #"["x"]"#])
    func aFieldOfTheWrongTypeIsTreatedAsMissing(value: String) throws {
        #expect(
            try hex(#"{"senderUUID":\#(value),"senderName":\#(value),"hexDescription":\#(value),"hexColor":\#(value)}"#)
                == HexJM())
        #expect(
            try hex(#"{"links":[{"url":\#(value),"linkDescription":\#(value),"service":\#(value)}]}"#).links == [
                LinkJM()
            ])
    }

    @Test(arguments: [#""a string""#, "12", #"{"url":"an object"}"#, "true"])
    func linksOfTheWrongTypeAreTreatedAsMissing(links: String) throws {
        #expect(try hex(#"{"senderName":"kept","links":\#(links)}"#) == HexJM(senderName: "kept"))
    }

    @Test func aJMObjectThatIsNotAnObjectIsMissing() throws {
        for value in [#""text""#, "[1,2]", "3", "null"] {
            #expect(
                try decode(#"{"versionID":"1","operationType":"Store","jmObjectType":"Hex","jmObject":\#(value)}"#)
                    .jmObject == nil)
            #expect(
                try decode(#"{"versionID":"1","operationType":"Store","jmObjectType":"Folder","jmObject":\#(value)}"#)
                    .jmObject == nil)
        }
    }

    @Test func unknownValuesAreKeptAsValues() throws {
        let envelope = try decode(
            #"{"versionID":"7","operationType":"Teleport","jmObjectType":"Folder","#
                + #""jmObject":{"name":"x","n":[1,null]}}"#
        )
        #expect(envelope.operationType == "Teleport")
        #expect(envelope.jmObjectType == "Folder")
        #expect(envelope.jmObject == .opaque(rawJSON(#"{"name":"x","n":[1,null]}"#)))
        #expect(try hex(#"{"links":[{"service":"OneDrive"}]}"#).links?.first?.service == "OneDrive")
        #expect(try decode(#"{"versionID":"7","operationType":"Ack","status":"queued"}"#).status == "queued")
    }

    @Test func aStoreWithoutJMObjectTypeCarriesAHex() throws {
        let envelope = try decode(#"{"versionID":"1.0","operationType":"Store","jmObject":{"senderName":"A"}}"#)
        #expect(envelope.hex == HexJM(senderName: "A"))
        #expect(envelope.jmObjectType == nil)
        // Only a Store: for another operation an untyped object stays opaque.
        #expect(try decode(#"{"versionID":"1.0","operationType":"Other","jmObject":{"senderName":"A"}}"#).hex == nil)
    }

    @Test func aStringifiedJMObjectIsReadAsTheObjectItHolds() throws {
        let inner = #"{\"senderName\":\"A\",\"links\":[{\"url\":\"https:\\/\\/x\"}]}"#
        let envelope = try decode(
            #"{"versionID":"1.0","operationType":"Store","jmObjectType":"Hex","jmObject":"\#(inner)"}"#)
        #expect(envelope.hex == HexJM(senderName: "A", links: [LinkJM(url: "https://x")]))
        let opaque = try decode(
            #"{"versionID":"1.0","operationType":"Sync","jmObjectType":"Folder","jmObject":" {\"n\" : [1, 2]} "}"#)
        #expect(opaque.jmObject == .opaque(rawJSON(#"{"n":[1,2]}"#)))
        // A string that does not hold one object counts as a jmObject of the wrong type.
        for text in [#""not json""#, #""[1]""#, #""{\"a\":1} x""#, #""\"{}\"""#, #""""#] {
            #expect(
                try decode(#"{"versionID":"1","operationType":"Store","jmObject":\#(text)}"#).jmObject == nil, "\(text)"
            )
        }
    }

    @Test func theLastOfTwoEqualKeysWins() throws {
        let envelope = try decode(#"{"versionID":"1","operationType":"Alert","message":"first","message":"second"}"#)
        #expect(envelope.message == "second")
    }

    @Test func keysAreCaseSensitive() throws {
        #expect(try hex(##"{"SenderName":"A","hexcolor":"#FFFFFF"}"##) == HexJM())
        #expect(try decode(#"{"versionID":"1","operationType":"store","jmObject":{"senderName":"A"}}"#).hex == nil)
    }

    @Test(arguments: [
        ("", EnvelopeDecodingError.malformedJSON),
        ("not json", .malformedJSON),
        (#"{"versionID":"1","operationType":"Store""#, .malformedJSON),
        (#"{"versionID":"1","operationType":"Store"} {}"#, .malformedJSON),
        ("[]", .notAnObject),
        (#""text""#, .notAnObject),
        ("null", .notAnObject),
        (#"{"operationType":"Store"}"#, .missingKey("versionID", messageID: nil)),
        (#"{"versionID":null,"operationType":"Store"}"#, .missingKey("versionID", messageID: nil)),
        (#"{"versionID":"1","operationType":["Store"]}"#, .missingKey("operationType", messageID: nil)),
        (#"{"versionID":"1","messageID":"M-1"}"#, .missingKey("operationType", messageID: "M-1")),
    ])
    func onlyNonEnvelopesAreErrors(json: String, error: EnvelopeDecodingError) {
        #expect(throws: error) { try decode(json) }
        #expect(!error.description.isEmpty)
    }

    @Test func aStringThatIsNotUTF8IsAFieldOfTheWrongType() throws {
        let badBytes: [UInt8] = [0xFF, 0xFE]
        func line(_ before: String, _ after: String) -> [UInt8] { Array(before.utf8) + badBytes + Array(after.utf8) }
        let envelope = try Envelope.decode(
            from: line(
                ##"{"versionID":"1","operationType":"Store","jmObject":{"hexColor":"#FFFFFF","senderName":""##, #""}}"#)
        )
        #expect(envelope.hex == HexJM(hexColor: "#FFFFFF"))
        #expect(throws: EnvelopeDecodingError.missingKey("versionID", messageID: nil)) {
            try Envelope.decode(from: line(#"{"operationType":"Alert","versionID":""#, #""}"#))
        }
        #expect(throws: EnvelopeDecodingError.malformedJSON) {
            try Envelope.decode(from: line(#"{"operationType":"Alert","versionID":"1"}"#, ""))
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let depth = 100_000
        let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(throws: EnvelopeDecodingError.malformedJSON) { try decode(deep) }
        let deepInside = #"{"versionID":"1","operationType":"Store","jmObject":{"x":"# + deep + "}}"
        #expect(throws: EnvelopeDecodingError.malformedJSON) { try decode(deepInside) }
    }

    @Test func whiteSpaceAroundTheObjectIsAccepted() throws {
        #expect(try decode(" \t{\"versionID\":\"1\",\"operationType\":\"Alert\"} ").operationType == .alert)
    }
}
