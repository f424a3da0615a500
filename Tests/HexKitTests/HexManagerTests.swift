import HexKit
import HexTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct HexManagerTests {
    static let sender = "6F9619FF-8B86-4011-B42D-00C04FC964FF"

    private func storeLine(_ description: String, messageID: String? = nil, sender: String = Self.sender) -> String {
        String(
            decoding: Envelope.store(
                HexJM(
                    senderUUID: sender, senderName: "Jane Doe", hexDescription: description, hexColor: "#3498DB",
                    links: [
                        LinkJM(
                            url: "https://example.com/\(description)", linkDescription: description, service: .dropbox)
                    ]),
                versionID: "1.0", messageID: messageID
            ).encodedLine(), as: UTF8.self)
    }

    // MARK: Receiving

    @Test func storedHexesGoOnTopOfTheInboxUnchecked() throws {
        let receiver = try Receiver()
        for name in ["first", "second", "third"] { _ = try receiver.receive(line: storeLine(name)) }
        let inbox = try receiver.manager.inbox()
        #expect(inbox.map(\.hexDescription) == ["third", "second", "first"])
        #expect(inbox.allSatisfy { !$0.isChecked && $0.location == .inbox })
        #expect(try receiver.manager.counts().unchecked == 3)
        #expect(Set(inbox.map(\.id)).count == 3, "every received hex gets a new id")
    }

    @Test func aStoredHexGetsTheReceiversIdAndTime() throws {
        let receiver = try Receiver()
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let envelope = try Envelope.decode(from: Array(storeLine("x").utf8))
        guard case .stored(let hex) = try receiver.manager.receive(envelope, at: time) else {
            Issue.record("not stored")
            return
        }
        let reread = try receiver.manager.hex(id: hex.id)
        #expect(reread == hex)
        #expect(reread.timestamp == time)
        #expect(reread.links.count == 1 && reread.links[0].service == .dropbox)
    }

    @Test func markingCheckedLowersTheUncheckedCount() throws {
        let receiver = try Receiver()
        _ = try receiver.receive(line: storeLine("a"))
        _ = try receiver.receive(line: storeLine("b"))
        let newest = try #require(try receiver.manager.inbox().first)
        try receiver.manager.markChecked(id: newest.id)
        try receiver.manager.markChecked(id: newest.id)
        #expect(try receiver.manager.counts().unchecked == 1)
        #expect(try receiver.manager.hex(id: newest.id).isChecked)
        #expect(throws: HexManagerError.hexNotFound(Self.unknownID, in: .inbox)) {
            try receiver.manager.markChecked(id: Self.unknownID)
        }
    }

    @Test func theSameMessageIDIsStoredOnce() throws {
        let receiver = try Receiver()
        let line = storeLine("once", messageID: "AAAAAAAA-0000-4000-8000-000000000001")
        guard case .stored = try receiver.receive(line: line) else { throw Failure("first delivery was not stored") }
        #expect(try receiver.receive(line: line) == .duplicate)
        #expect(try receiver.manager.inbox().count == 1)
        // Without a messageID a legacy sender's repeat cannot be recognised: it is a new hex.
        _ = try receiver.receive(line: storeLine("legacy"))
        _ = try receiver.receive(line: storeLine("legacy"))
        #expect(try receiver.manager.inbox().count == 3)
    }

    @Test func aBlockedSendersStoreIsRefusedAndNothingIsStored() throws {
        let receiver = try Receiver()
        #expect(try receiver.manager.block(senderUUID: Self.sender.lowercased()))
        #expect(try !receiver.manager.block(senderUUID: Self.sender), "blocking twice changes nothing")
        #expect(try receiver.manager.blockedSenders() == [Self.sender])

        let legacy = try Envelope.decode(from: Array(storeLine("spam").utf8))
        let outcome = try receiver.manager.receive(legacy)
        #expect(outcome == .rejected(alert: "\(Receiver.name) blocked you."))
        #expect(
            receiver.dialect.reply(to: legacy, outcome: outcome)
                == .alert("\(Receiver.name) blocked you.", versionID: HexdVersion.current))

        let current = try Envelope.decode(from: Array(storeLine("spam", messageID: "M-2").utf8))
        let reply = receiver.dialect.reply(to: current, outcome: try receiver.manager.receive(current))
        #expect(reply?.operationType == .ack && reply?.status == .rejected && reply?.messageID == "M-2")
        #expect(try receiver.manager.inbox().isEmpty)

        #expect(try receiver.manager.unblock(senderUUID: Self.sender))
        guard case .stored = try receiver.receive(line: storeLine("welcome back")) else {
            throw Failure("not stored after unblock")
        }
    }

    @Test func otherSendersAreNotAffectedByABlock() throws {
        let receiver = try Receiver()
        try receiver.manager.block(senderUUID: Self.sender)
        guard
            case .stored = try receiver.receive(line: storeLine("fine", sender: "11111111-2222-4333-8444-555555555555"))
        else {
            throw Failure("another sender was refused")
        }
    }

    @Test func legacySendersGetNoReplyExceptTheBlockAlert() throws {
        let receiver = try Receiver()
        for line in [
            storeLine("x"), #"{"versionID":"1.0","operationType":"Alert","message":"hi"}"#,
            #"{"versionID":"1.0","operationType":"Nope"}"#,
        ] {
            let envelope = try Envelope.decode(from: Array(line.utf8))
            #expect(receiver.dialect.reply(to: envelope, outcome: try receiver.manager.receive(envelope)) == nil)
        }
    }

    @Test func anAckIsNeverAnswered() throws {
        let receiver = try Receiver()
        let ack = Envelope.ack(.stored, messageID: "M-9", message: "stored", versionID: "2.0.0")
        let outcome = try receiver.manager.receive(ack)
        #expect(outcome.ackStatus == .unsupported)
        #expect(receiver.dialect.reply(to: ack, outcome: outcome) == nil)
    }

    @Test func anAcknowledgedStoreNamesTheStoredHex() throws {
        let receiver = try Receiver()
        let envelope = try Envelope.decode(from: Array(storeLine("x", messageID: "M-3").utf8))
        let outcome = try receiver.manager.receive(envelope)
        let reply = try #require(receiver.dialect.reply(to: envelope, outcome: outcome))
        let stored = try #require(try receiver.manager.inbox().first)
        #expect(reply.status == .stored && reply.messageID == "M-3")
        #expect(reply.message?.contains(stored.id.uuidString.uppercased()) == true)
        #expect(reply.hexID == stored.id.uuidString.uppercased(), "and carries its id for scripts")
        let duplicate = try receiver.manager.receive(envelope)
        #expect(receiver.dialect.reply(to: envelope, outcome: duplicate)?.hexID == nil, "only a stored Ack has one")
    }

    // MARK: My Hexlist

    @Test func savingAnInboxHexMakesACopyThatKeepsItsSender() throws {
        let receiver = try Receiver()
        _ = try receiver.receive(line: storeLine("keep me"))
        let original = try #require(try receiver.manager.inbox().first)
        let copy = try receiver.manager.saveToMyHexlist(id: original.id)
        #expect(copy.id != original.id && copy.location == .myHexlist)
        #expect(copy.senderUUID == Self.sender && copy.senderName == "Jane Doe")
        #expect(copy.links.map(\.url) == original.links.map(\.url))
        #expect(Set(copy.links.map(\.id)).isDisjoint(with: original.links.map(\.id)))
        #expect(try receiver.manager.myHexlist() == [copy])
        #expect(try receiver.manager.inbox() == [original], "the inbox keeps its hex")

        try receiver.manager.delete(id: original.id)
        #expect(try receiver.manager.myHexlist() == [copy], "deleting the original leaves the copy")
        #expect(throws: HexManagerError.hexNotFound(copy.id, in: .inbox)) {
            try receiver.manager.saveToMyHexlist(id: copy.id)
        }
    }

    @Test func myHexlistKeepsTheUsersOrder() throws {
        let receiver = try Receiver()
        let names = ["a", "b", "c", "d"]
        var ids: [String: UUID] = [:]
        for name in names { ids[name] = try receiver.manager.createHex(description: name, links: []).id }
        #expect(try receiver.manager.myHexlist().map(\.hexDescription) == ["d", "c", "b", "a"], "new hexes go on top")
        try receiver.manager.moveInHexlist(id: try #require(ids["a"]), to: 0)
        #expect(try receiver.manager.myHexlist().map(\.hexDescription) == ["a", "d", "c", "b"])
        try receiver.manager.moveInHexlist(id: try #require(ids["d"]), to: 99)
        #expect(try receiver.manager.myHexlist().map(\.hexDescription) == ["a", "c", "b", "d"])
        try receiver.manager.moveInHexlist(id: try #require(ids["b"]), to: 1)
        #expect(try receiver.manager.myHexlist().map(\.hexDescription) == ["a", "b", "c", "d"])
        _ = try receiver.manager.createHex(description: "e", links: [])
        #expect(try receiver.manager.myHexlist().map(\.hexDescription) == ["e", "a", "b", "c", "d"])
        #expect(throws: HexManagerError.hexNotFound(Self.unknownID, in: .myHexlist)) {
            try receiver.manager.moveInHexlist(id: Self.unknownID, to: 0)
        }
    }

    @Test func createdHexesNeedAValidColourAndComeFromTheLocalIdentity() throws {
        let receiver = try Receiver()
        #expect(throws: HexManagerError.invalidColor("blue")) {
            try receiver.manager.createHex(description: "x", color: "blue", links: [])
        }
        #expect(throws: HexManagerError.invalidColor("#12345")) {
            try receiver.manager.createHex(description: "x", color: "#12345", links: [])
        }
        let hex = try receiver.manager.createHex(description: "x", color: "a1b2c3", links: [])
        #expect(
            hex.hexColor == "#A1B2C3" && hex.senderName == Receiver.name
                && hex.senderUUID == receiver.manager.identity.uuid)
        #expect(try receiver.manager.myHexlist().count == 1 && receiver.manager.inbox().isEmpty)
    }

    @Test func deleteRemovesAHexAndItsLinks() throws {
        let receiver = try Receiver()
        _ = try receiver.receive(line: storeLine("gone"))
        let hex = try #require(try receiver.manager.inbox().first)
        try receiver.manager.delete(id: hex.id)
        #expect(try receiver.manager.inbox().isEmpty && receiver.manager.counts().unchecked == 0)
        #expect(throws: HexManagerError.hexNotFound(hex.id, in: nil)) { try receiver.manager.delete(id: hex.id) }
        #expect(throws: HexManagerError.hexNotFound(hex.id, in: nil)) { try receiver.manager.hex(id: hex.id) }
    }

    @Test func errorsExplainThemselves() {
        #expect(HexManagerError.hexNotFound(Self.unknownID, in: .inbox).description.contains("inbox"))
        #expect(HexManagerError.invalidColor("x").description.contains("#RRGGBB"))
    }

    static let unknownID = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
}

/// A test precondition that did not hold.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
