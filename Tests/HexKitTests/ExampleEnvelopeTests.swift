import HexKit
import HexTestSupport
import Testing

/// Every `Examples/envelopes/NN-name.envelope` gives exactly the outcome written in its
/// `NN-name.expected.json`: the documentation and the behaviour cannot drift apart.
@Suite(.timeLimit(.minutes(5))) struct ExampleEnvelopeTests {
    static let folder = #filePath.split(separator: "/").dropLast(3).map { "/" + $0 }.joined() + "/Examples/envelopes"

    static var exampleNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".envelope") }
            .map { String($0.dropLast(".envelope".count)) }
            .sorted()
    }

    /// The keys of an `.expected.json` (see Examples/envelopes/README.md).
    struct Expectation: Decodable {
        struct Setup: Decodable { var blockedSenders: [String]? }
        struct Reply: Decodable {
            var operationType: String
            var status: String?
            var messageID: String?
            var message: String?
        }
        struct StoredLink: Decodable, Equatable {
            var url: String
            var linkDescription: String
            var service: String
        }
        struct StoredHex: Decodable {
            var senderUUID: String, senderName: String, hexDescription: String, hexColor: String
            var links: [StoredLink]
        }
        var about: String
        var setup: Setup?
        var decode: String
        var outcome: String?
        var reply: Reply?
        var stored: StoredHex?
    }

    @Test func theExamplesFolderHoldsEveryDocumentedCase() {
        #expect(Self.exampleNames.count >= 16)
    }

    @Test(arguments: exampleNames)
    func exampleGivesItsDocumentedOutcome(_ name: String) throws {
        let expected = try JSONDecoder().decode(
            Expectation.self,
            from: try #require(FileManager.default.contents(atPath: "\(Self.folder)/\(name).expected.json")))
        var line = try #require(FileManager.default.contents(atPath: "\(Self.folder)/\(name).envelope"))
        #expect(line.last == UInt8(ascii: "\n"), "an envelope file is one line ending in a newline")
        line.removeLast()
        #expect(!line.contains(UInt8(ascii: "\n")), "an envelope file holds exactly one line")

        let receiver = try Receiver()
        for sender in expected.setup?.blockedSenders ?? [] { try receiver.manager.block(senderUUID: sender) }

        let envelope: Envelope
        do {
            envelope = try Envelope.decode(from: line)
        } catch {
            #expect(Self.name(of: error) == expected.decode, "\(expected.about)")
            check(receiver.dialect.reply(toUnreadable: error), against: expected.reply)
            #expect(try receiver.manager.inbox().isEmpty)
            return
        }
        #expect(expected.decode == "ok", "\(expected.about)")

        let outcome = try receiver.manager.receive(envelope)
        #expect(Self.name(of: outcome) == expected.outcome, "\(expected.about)")
        check(receiver.dialect.reply(to: envelope, outcome: outcome), against: expected.reply)

        let inbox = try receiver.manager.inbox()
        guard let storedExpectation = expected.stored else {
            #expect(inbox.isEmpty, "nothing is stored for \(name)")
            return
        }
        let stored = try #require(inbox.first)
        #expect(inbox.count == 1)
        #expect(stored.senderUUID == storedExpectation.senderUUID)
        #expect(stored.senderName == storedExpectation.senderName)
        #expect(stored.hexDescription == storedExpectation.hexDescription)
        #expect(stored.hexColor == storedExpectation.hexColor)
        #expect(
            stored.links.map {
                Expectation.StoredLink(url: $0.url, linkDescription: $0.linkDescription, service: $0.service.rawValue)
            }
                == storedExpectation.links)
        #expect(!stored.isChecked)
    }

    private func check(_ reply: Envelope?, against expected: Expectation.Reply?) {
        guard let expected else {
            #expect(reply == nil, "no reply is expected")
            return
        }
        guard let reply else {
            Issue.record("expected a \(expected.operationType) reply, got none")
            return
        }
        #expect(reply.operationType.rawValue == expected.operationType)
        #expect(reply.versionID == HexdVersion.current)
        if let status = expected.status { #expect(reply.status?.rawValue == status) }
        #expect(reply.messageID == expected.messageID)
        if let message = expected.message { #expect(reply.message == message) }
        // Every reply goes back on the wire, so it must itself decode as an envelope.
        #expect((try? Envelope.decode(from: reply.encodedLine())) == reply)
    }

    private static func name(of error: EnvelopeDecodingError) -> String {
        switch error {
        case .malformedJSON: "malformedJSON"
        case .notAnObject: "notAnObject"
        case .missingKey(let key, _): "missingKey:\(key)"
        case .exceedsLimit: "exceedsLimit"
        }
    }

    private static func name(of outcome: ReceiveOutcome) -> String {
        switch outcome {
        case .stored: "stored"
        case .duplicate: "duplicate"
        case .rejected: "rejected"
        case .forged: "forged"
        case .alert: "alert"
        case .unsupported: "unsupported"
        case .invalid: "invalid"
        case .noRoom: "noRoom"
        }
    }
}
