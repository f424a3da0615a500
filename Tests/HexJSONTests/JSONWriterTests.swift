import HexJSON
import Testing

@Suite(.timeLimit(.minutes(5))) struct JSONWriterTests {
    @Test func stringsAreEscapedAndReadBackTheSame() throws {
        let tricky = "quote \" backslash \\ slash / newline \n return \r tab \t bell \u{07} nul \u{0} é 🚀"
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("text", tricky)
        writer.key("list")
        writer.beginArray()
        writer.string("a")
        writer.raw(Array("[1,{}]".utf8))
        writer.endArray()
        writer.member("absent", nil)
        writer.endObject()
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(!text.contains("\n") && text.contains(#"\/"#))
        guard case .object(let object) = try JSONValue.parse(writer.bytes) else {
            Issue.record("not an object: \(text)")
            return
        }
        #expect(object["text"] == .string(tricky))
        #expect(object.keys == ["text", "list"])
    }

    @Test func slashesAreLeftAloneWhenAsked() {
        var writer = JSONWriter(escapeSlashes: false)
        writer.string("a/b")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""a/b""#)
    }
}
