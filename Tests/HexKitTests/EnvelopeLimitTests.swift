import HexKit
import Testing

/// One envelope's cost is bounded: past a limit it is refused whole, with a reason and the
/// `messageID` (wherever it stands in the line) so the sender can be answered.
@Suite(.timeLimit(.minutes(5))) struct EnvelopeLimitTests {
    private let small = EnvelopeLimits(maximumLinks: 3, maximumStringBytes: 16)

    private func store(links: Int, url: String = "u", messageIDFirst: Bool = false) -> [UInt8] {
        let linkList = Array(repeating: #"{"url":"\#(url)"}"#, count: links).joined(separator: ",")
        let id = #""messageID":"M-1""#
        let body = #""versionID":"2.0.0","operationType":"Store","jmObject":{"links":[\#(linkList)]}"#
        return Array((messageIDFirst ? "{\(id),\(body)}" : "{\(body),\(id)}").utf8)
    }

    @Test func linksUpToTheLimitAreKept() throws {
        #expect(try Envelope.decode(from: store(links: 3), limits: small).hex?.links?.count == 3)
    }

    @Test(arguments: [false, true])
    func tooManyLinksAreRefusedWithTheMessageID(messageIDFirst: Bool) {
        #expect(throws: EnvelopeDecodingError.exceedsLimit("more than 3 links", messageID: "M-1")) {
            try Envelope.decode(from: store(links: 4, messageIDFirst: messageIDFirst), limits: small)
        }
    }

    @Test func aLongStringIsRefusedWithoutBeingDecoded() {
        #expect(throws: EnvelopeDecodingError.exceedsLimit("url is 17 bytes, more than 16", messageID: "M-1")) {
            try Envelope.decode(from: store(links: 1, url: String(repeating: "x", count: 17)), limits: small)
        }
        #expect(throws: EnvelopeDecodingError.self) {
            try Envelope.decode(
                from: Array(#"{"versionID":"\#(String(repeating: "9", count: 17))","operationType":"Alert"}"#.utf8),
                limits: small)
        }
    }

    @Test func limitsApplyOnlyToWhatIsKept() throws {
        // An unknown key may be large (the line cap bounds it); an opaque object is kept as raw text.
        let big = String(repeating: "x", count: 1_000)
        let line =
            #"{"versionID":"1","operationType":"Sync","jmObjectType":"Folder","#
            + #""jmObject":{"links":[{},{},{},{},{}],"name":"\#(big)"},"future":"\#(big)"}"#
        let envelope = try Envelope.decode(from: Array(line.utf8), limits: small)
        guard case .opaque(let raw)? = envelope.jmObject else {
            Issue.record("expected an opaque object")
            return
        }
        #expect(raw.bytes.count > 1_000)
    }

    @Test func theDefaultsAreFarAboveHonestUse() throws {
        let limits = EnvelopeLimits.default
        #expect(
            limits.maximumLinks == 100_000 && limits.maximumStringBytes == 65_536 && limits.json.maximumDepth == 512)
        let honest = store(links: 1_000, url: "https://example.com/" + String(repeating: "a", count: 2_000))
        #expect(try Envelope.decode(from: honest).hex?.links?.count == 1_000)
    }
}
