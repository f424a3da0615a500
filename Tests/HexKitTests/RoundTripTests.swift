import HexKit
import Testing

@Suite(.timeLimit(.minutes(5))) struct RoundTripTests {
    static let fullHex = HexJM(
        senderUUID: "6F9619FF-8B86-4011-B42D-00C04FC964FF", senderName: "Zoë Ünïcødé 🚀",
        hexDescription: "line one\nline \"two\"\t/x",
        hexColor: "#3498DB",
        links: [
            LinkJM(url: "https://example.com/a?b=c&d=%20", linkDescription: "example.com", service: .unknown),
            LinkJM(url: "file:///tmp/x y", linkDescription: "x y", service: "OneDrive"),
        ])

    @Test(arguments: [
        Envelope.store(fullHex, versionID: "2.0.0", messageID: "D3ADB33F-0000-4000-8000-000000000001"),
        Envelope.store(HexJM(), versionID: "1.0"),
        Envelope.alert("Jane Doe blocked you.", versionID: "1.0"),
        Envelope.ack(.duplicate, messageID: "M", message: "already stored", versionID: "2.0.0"),
        Envelope.ack(
            .stored, messageID: "M", message: "stored", versionID: "2.0.0",
            hexID: "9B516502-0000-4000-8000-000000000001"),
        Envelope(
            versionID: "4", operationType: "Sync", jmObjectType: "Folder",
            jmObject: .opaque(rawJSON(#"{"a":[true,null,2.5,"é",{"b":"\/"}]}"#))),
    ])
    func envelopesSurviveEncodeThenDecode(_ envelope: Envelope) throws {
        let line = envelope.encodedLine()
        #expect(try Envelope.decode(from: line) == envelope)
    }

    @Test func encodingIsOneCompactLineOfUTF8() throws {
        let line = Envelope.store(Self.fullHex, versionID: "2.0.0").encodedLine()
        let text = try #require(String(validating: line, as: UTF8.self))
        #expect(!text.contains("\n") && !text.contains("\r"))
        #expect(!text.contains(": ") && !text.contains(", "), "compact: no white space between tokens")
        #expect(text.hasPrefix("{") && text.hasSuffix("}"))
        #expect(text.contains(#"https:\/\/example.com"#), "slashes are written \\/ as the original app did")
        #expect(text.contains("🚀"), "non-ASCII text is written as UTF-8, not escaped")
    }

    @Test func unsetFieldsAreAbsentNotNull() {
        let text = String(
            decoding: Envelope.store(HexJM(senderName: "A", links: [LinkJM(url: "u")]), versionID: "1.0").encodedLine(),
            as: UTF8.self)
        #expect(
            text
                == #"{"jmObject":{"links":[{"url":"u"}],"senderName":"A"},"#
                + #""jmObjectType":"Hex","operationType":"Store","versionID":"1.0"}"#
        )
    }

    @Test func theSameEnvelopeIsAlwaysTheSameBytes() {
        let envelope = Envelope.store(Self.fullHex, versionID: "2.0.0", messageID: "M")
        #expect(Set((0..<20).map { _ in envelope.encodedLine() }).count == 1)
    }

    @Test func theOriginalExampleDecodesToTheSameValuesItWasWrittenFrom() throws {
        let original =
            ##"{"versionID":"1.0","operationType":"Store","jmObjectType":"Hex","##
            + ##""jmObject":{"senderUUID":"6F9619FF-8B86-4011-B42D-00C04FC964FF","senderName":"Jane Doe","##
            + ##""hexDescription":"Trip photos","hexColor":"#3498DB","##
            + ##""links":[{"url":"https:\/\/example.com\/article","linkDescription":"example.com","##
            + ##""service":"Unknown"}]}}"##
        let envelope = try Envelope.decode(from: Array(original.utf8))
        #expect(
            envelope
                == .store(
                    HexJM(
                        senderUUID: "6F9619FF-8B86-4011-B42D-00C04FC964FF", senderName: "Jane Doe",
                        hexDescription: "Trip photos", hexColor: "#3498DB",
                        links: [
                            LinkJM(
                                url: "https://example.com/article", linkDescription: "example.com", service: .unknown)
                        ]),
                    versionID: "1.0"))
        #expect(try Envelope.decode(from: envelope.encodedLine()) == envelope)
    }
}
