import HexKit
import HexTestSupport
import Testing

/// The two generations' rules: what is sent to a peer, and how this daemon answers.
@Suite(.timeLimit(.minutes(5))) struct DialectTests {
    // MARK: Sending

    @Test func whatIsSentNeverHasAnEmptyNameColourOrService() throws {
        let receiver = try Receiver()
        let hex = HexManager.makeHex(from: HexJM(links: [LinkJM(url: "u")]), location: .inbox, at: Date())
        for legacy in [false, true] {
            let sent = Dialect(legacy ? .legacy : .current).hexJM(hex, from: receiver.manager.identity)
            #expect(sent.senderName == Receiver.name)
            #expect(sent.senderUUID == receiver.manager.identity.uuid)
            #expect(sent.hexColor == HexColor.fallback)
            #expect(sent.links == [LinkJM(url: "u", linkDescription: "", service: .unknown)])
        }
    }

    @Test func aLegacyReceiverGetsOnlyTheFourOriginalServices() throws {
        let receiver = try Receiver()
        let services: [Service] = [.unknown, .dropbox, .box, .googleDrive, "OneDrive", "", "dropbox"]
        let hex = Hex(
            location: .myHexlist, senderUUID: "", senderName: "", hexDescription: "d", hexColor: "#abcdef",
            links: services.map { Link(url: "u", linkDescription: "l", service: $0) }, isChecked: true)
        let legacy = Dialect(.legacy).hexJM(hex, from: receiver.manager.identity)
        #expect(
            legacy.links?.compactMap(\.service) == [
                .unknown, .dropbox, .box, .googleDrive, .unknown, .unknown, .unknown,
            ])
        #expect(legacy.hexColor == "#ABCDEF", "colours go out as uppercase #RRGGBB")
        let current = Dialect(.current).hexJM(hex, from: receiver.manager.identity)
        #expect(
            current.links?.compactMap(\.service) == [
                .unknown, .dropbox, .box, .googleDrive, "OneDrive", .unknown, "dropbox",
            ])
    }

    @Test func aLegacyStoreEnvelopeCarriesNoExtensions() throws {
        let receiver = try Receiver()
        let hex = try receiver.manager.createHex(
            description: "mine", links: [Link(url: "u", linkDescription: "l", service: .box)])
        let legacy = Dialect(.legacy).store(hex, from: receiver.manager.identity)
        #expect(legacy.messageID == nil && legacy.status == nil)
        #expect(OperationType.legacy.contains(legacy.operationType) && legacy.jmObjectType == .hex)
        #expect(Dialect(.current).store(hex, from: receiver.manager.identity).messageID != nil)
    }

    @Test func anEnvelopeKeptForACurrentPeerIsAdaptedToALegacyOneWhenSent() throws {
        let receiver = try Receiver()
        let hex = try receiver.manager.createHex(
            description: "queued", links: [Link(url: "u", linkDescription: "l", service: "OneDrive")])
        let kept = Dialect(.current).store(hex, from: receiver.manager.identity)
        #expect(Dialect(.current).adapted(kept) == kept)
        let legacy = Dialect(.legacy).adapted(kept)
        #expect(legacy == Dialect(.legacy).store(hex, from: receiver.manager.identity))
        #expect(legacy.messageID == nil && legacy.hex?.links?.compactMap(\.service) == [.unknown])
        #expect(Dialect(.legacy).adapted(Dialect(.current).alert("hi")).messageID == nil)
    }

    @Test func aSentHexIsStoredByAnotherReceiverAsItWasSent() throws {
        let sender = try Receiver()
        let receiver = try Receiver()
        let hex = try sender.manager.createHex(
            description: "to you", color: "#112233",
            links: [Link(url: "https://a.example/1", linkDescription: "one", service: .googleDrive)])
        let line = String(
            decoding: Dialect(.current).store(hex, from: sender.manager.identity).encodedLine(), as: UTF8.self)
        guard case .stored(let stored) = try receiver.receive(line: line) else { throw Failure("not stored") }
        #expect(stored.senderUUID == sender.manager.identity.uuid && stored.senderName == Receiver.name)
        #expect(stored.hexDescription == "to you" && stored.hexColor == "#112233")
        #expect(stored.links.map(\.url) == ["https://a.example/1"] && stored.links[0].service == .googleDrive)
    }

    @Test func theDialectFollowsThePeersVersionUnlessLegacyIsForced() {
        #expect(Dialect(sendingTo: "2.0.0", forceLegacy: false).generation == .current)
        #expect(
            Dialect(sendingTo: nil, forceLegacy: false).generation == .current,
            "an address never announced is taken as current")
        #expect(Dialect(sendingTo: "1.0", forceLegacy: false).generation == .legacy)
        #expect(Dialect(sendingTo: "not a version", forceLegacy: false).generation == .legacy)
        #expect(Dialect(sendingTo: "2.0.0", forceLegacy: true).generation == .legacy)
    }

    @Test func anAlertAsksForAnAckOnlyFromACurrentPeer() {
        #expect(Dialect(.current).alert("hi").messageID != nil)
        let legacy = Dialect(.legacy).alert("hi")
        #expect(legacy.messageID == nil && legacy.message == "hi" && legacy.operationType == .alert)
    }

    // MARK: Answering

    @Test func playingALegacyPeerAnswersNothingButTheBlockAlert() throws {
        let legacy = Dialect(.legacy)
        let line =
            #"{"versionID":"2.0.0","operationType":"Store","jmObjectType":"Hex","jmObject":{},"messageID":"M-1"}"#
        let envelope = legacy.received(try Envelope.decode(from: Array(line.utf8)))
        #expect(envelope.messageID == nil, "a legacy peer knows nothing of messageIDs")
        #expect(legacy.reply(to: envelope, outcome: .duplicate) == nil)
        #expect(
            legacy.reply(to: envelope, outcome: .rejected(alert: "R blocked you."))
                == .alert("R blocked you.", versionID: HexdVersion.current))
        #expect(legacy.reply(toLineLongerThan: 10) == nil)
        #expect(legacy.reply(toUnstored: envelope, because: "disk full") == nil)
        do {
            _ = try Envelope.decode(from: Array("[".utf8))
            Issue.record("'[' decoded")
        } catch {
            #expect(legacy.reply(toUnreadable: error) == nil)
            #expect(Dialect(.current).reply(toUnreadable: error)?.status == .invalid)
        }
    }

    @Test func aCurrentReceiverAnswersEveryFailureItCanName() throws {
        let current = Dialect(.current)
        let envelope = Envelope.alert("x", versionID: "2.0.0", messageID: "M-7")
        #expect(current.received(envelope) == envelope)
        let unstored = try #require(current.reply(toUnstored: envelope, because: "disk full"))
        #expect(
            unstored.status == .failed && unstored.messageID == "M-7" && unstored.message?.contains("disk full") == true
        )
        #expect(current.reply(toLineLongerThan: 10)?.status == .invalid)
        #expect(
            current.reply(toUnstored: Envelope.alert("x", versionID: "1.0"), because: "disk full") == nil,
            "no messageID, no Ack")
    }
}
