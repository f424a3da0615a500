import HexKit
import HexTestSupport
import Testing

/// Who may speak for a peer UUID: the key pinned to it, over TLS; plaintext only for peers never
/// known by a key.
@Suite(.timeLimit(.minutes(5))) struct SenderAuthenticationTests {
    /// Device IDs (version 8 UUIDs), as if derived from the keys below.
    static let ada = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
    static let eve = "11111111-2222-8333-8444-555555555555"
    /// A UUID of a legacy peer's own choosing.
    static let legacy = "99999999-2222-4333-8444-555555555555"
    static let adaKey = String(repeating: "a1", count: 32)
    static let eveKey = String(repeating: "e5", count: 32)
    static let adaProof = SenderProof.key(fingerprint: adaKey, deviceID: ada)
    static let eveProof = SenderProof.key(fingerprint: eveKey, deviceID: eve)

    private func store(_ description: String, from sender: String = Self.ada) -> Envelope {
        .store(
            HexJM(
                senderUUID: sender, senderName: "Ada", hexDescription: description, hexColor: "#3498DB",
                links: [LinkJM(url: "https://a.example/x")]),
            versionID: "2.0.0", messageID: UUID().uuidString)
    }

    @Test func theFirstKeyToSpeakForAUUIDIsPinnedAndTheHexSaysHow() throws {
        let receiver = try Receiver()
        guard
            case .stored(let hex) = try receiver.manager.receive(
                store("first"),
                proof: Self.adaProof)
        else { throw Failure("not stored") }
        let reread = try receiver.manager.hex(id: hex.id)
        #expect(hex.senderTrust == .new && reread.senderTrust == .new, "the key met for the first time with this hex")
        #expect(
            try receiver.database.pin(forPeer: Self.ada.lowercased())
                == PeerPin(peerUUID: Self.ada, fingerprint: Self.adaKey, trust: .pinned))
        guard case .stored(let again) = try receiver.manager.receive(store("again"), proof: Self.adaProof) else {
            throw Failure("the pinned key was refused")
        }
        #expect(again.senderTrust == .pinned)
    }

    @Test func anAlertFromAPairedDeviceOfAnotherKindLeavesItPaired() throws {
        // A device of another kind (KDE Connect's, say) keeps its ID's own spelling; the store matches IDs
        // in any case.
        let device = ExampleIDForms.provedDevice("edf748")
        let key = String(repeating: "c3", count: 32)
        let receiver = try Receiver()
        try receiver.database.setPin(PeerPin(peerUUID: device, fingerprint: key, trust: .paired))
        let ping = Envelope.alert("the pizza is here", versionID: "KDE Connect 7", messageID: UUID().uuidString)
        guard case .alert = try receiver.manager.receive(ping, proof: .key(fingerprint: key, deviceID: device)) else {
            throw Failure("the alert was not kept")
        }
        #expect(try receiver.database.pin(forPeer: device)?.trust == .paired, "no move of the pin onto itself")
        try receiver.database.movePeer(from: device.uppercased(), to: device)
        #expect(try receiver.database.pin(forPeer: device)?.trust == .paired, "a move onto the same ID is none")
    }

    @Test func anotherKeyCannotSpeakForAPinnedUUID() throws {
        let receiver = try Receiver()
        _ = try receiver.manager.receive(store("genuine"), proof: Self.adaProof)
        let outcome = try receiver.manager.receive(store("forged"), proof: Self.eveProof)
        guard case .forged(let reason) = outcome else { throw Failure("stored: \(outcome)") }
        #expect(
            outcome.ackStatus == .rejected && reason.contains(Self.ada) && reason.contains(Self.eve)
                && reason.contains(Self.eveKey))
        #expect(try receiver.manager.inbox().map(\.hexDescription) == ["genuine"])
    }

    @Test func aPinnedKeyCannotSpeakForAnotherUUID() throws {
        let receiver = try Receiver()
        _ = try receiver.manager.receive(store("genuine"), proof: Self.adaProof)
        guard
            case .forged = try receiver.manager.receive(
                store("as Eve", from: Self.eve),
                proof: Self.adaProof)
        else { throw Failure("stored") }
    }

    @Test func plaintextCannotSpeakForAPeerKnownByItsKey() throws {
        let receiver = try Receiver()
        guard
            case .stored(let legacy) = try receiver.manager.receive(
                store("legacy", from: Self.legacy),
                proof: .none)
        else { throw Failure("not stored") }
        #expect(legacy.senderTrust == .plaintext)
        _ = try receiver.manager.receive(store("genuine"), proof: Self.adaProof)
        for claim in [Self.ada, " " + Self.ada.lowercased() + " "] {
            guard case .forged = try receiver.manager.receive(store("plaintext claim", from: claim), proof: .none)
            else { throw Failure("stored \(claim)") }
        }
    }

    /// A block holds against a UUID written another way, and against its key under a new UUID.
    @Test func aBlockHoldsForTheUUIDInAnyFormAndForItsKey() throws {
        let receiver = try Receiver()
        _ = try receiver.manager.receive(store("genuine"), proof: Self.adaProof)
        try receiver.manager.block(senderUUID: Self.ada)
        #expect(
            try receiver.manager.receive(store("spaced", from: " " + Self.ada.lowercased()), proof: .none).ackStatus
                == .rejected)
        #expect(
            try receiver.manager.receive(
                store("keyed"),
                proof: Self.adaProof) == .rejected(alert: "\(Receiver.name) blocked you."))
        #expect(
            try receiver.manager.receive(
                store("new UUID", from: Self.eve),
                proof: Self.adaProof
            ).ackStatus == .rejected)
        #expect(try receiver.manager.inbox().count == 1)
    }

    /// A blocked peer's Alerts are refused like its hexes, whatever the policy: its key names it.
    @Test func aBlockRefusesTheAlertsOfTheBlockedKey() throws {
        let alert = Envelope.alert("pay this invoice", versionID: "2.0.0", messageID: UUID().uuidString)
        for policy in [AcceptPolicy.anyone, .known] {
            let receiver = try Receiver(accepting: policy)
            try receiver.database.setPin(PeerPin(peerUUID: Self.ada, fingerprint: Self.adaKey, trust: .pinned))
            let receive = { try receiver.manager.receive(alert, proof: Self.adaProof) }
            #expect(try receive().keptAlert?.senderID == Self.ada, "\(policy)")
            try receiver.manager.block(senderUUID: Self.ada.lowercased())
            #expect(try receive() == .rejected(alert: "\(Receiver.name) blocked you."), "\(policy)")
            try receiver.manager.unblock(senderUUID: Self.ada)
            #expect(try receive().keptAlert?.senderID == Self.ada, "\(policy)")
        }
    }

    /// A block names the ID a key proves, pinned or not: an Alert pins nothing, so a peer that
    /// never sent a hex is refused by its proven ID alone.
    @Test func aBlockRefusesTheAlertsOfAKeyPinnedToNothing() throws {
        let alert = Envelope.alert("pay this invoice", versionID: "2.0.0", messageID: UUID().uuidString)
        let receiver = try Receiver(accepting: .anyone)
        #expect(try receiver.manager.receive(alert, proof: Self.adaProof).keptAlert?.senderID == Self.ada)
        try receiver.manager.block(senderUUID: Self.ada)
        #expect(
            try receiver.manager.receive(alert, proof: Self.adaProof)
                == .rejected(alert: "\(Receiver.name) blocked you."))
        #expect(
            try receiver.manager.receive(alert, proof: Self.eveProof).keptAlert?.senderID == Self.eve,
            "another key is not blocked")
    }

    @Test func aPairedKeyIsReportedAsPaired() throws {
        let receiver = try Receiver()
        try receiver.database.setPin(PeerPin(peerUUID: Self.ada, fingerprint: Self.adaKey, trust: .paired))
        guard
            case .stored(let hex) = try receiver.manager.receive(
                store("paired"),
                proof: Self.adaProof)
        else { throw Failure("not stored") }
        #expect(hex.senderTrust == .paired)
        #expect(try receiver.database.removePin(forPeer: Self.ada))
        #expect(try !receiver.database.removePin(forPeer: Self.ada), "removed already")
    }

    /// A key pinned (and paired) to a UUID of its peer's own choosing, before IDs came from
    /// keys, moves with its trust and block to the ID it derives the first time it proves itself.
    @Test func aPinFromBeforeDerivedIDsMovesToTheDerivedID() throws {
        let receiver = try Receiver()
        try receiver.database.setPin(PeerPin(peerUUID: Self.legacy, fingerprint: Self.adaKey, trust: .paired))
        guard
            case .stored(let hex) = try receiver.manager.receive(
                store("after the upgrade"),
                proof: Self.adaProof)
        else {
            throw Failure("not stored")
        }
        #expect(hex.senderTrust == .paired && hex.senderUUID == Self.ada)
        #expect(try receiver.database.pin(forPeer: Self.legacy) == nil)
        #expect(
            try receiver.database.pin(forPeer: Self.ada)
                == PeerPin(
                    peerUUID: Self.ada, fingerprint: Self.adaKey,
                    trust: .paired))
    }

    /// Over TLS the sender is the ID the proven key derives, and nothing else; a derived ID is
    /// never spoken for in plaintext.
    @Test func theSenderOverTLSIsTheIDTheKeyDerives() throws {
        let receiver = try Receiver()
        for claim in [Self.legacy, Self.eve, ""] {
            guard
                case .forged(let reason) = try receiver.manager.receive(
                    store("claim", from: claim),
                    proof: Self.adaProof)
            else {
                throw Failure("\(claim) was taken")
            }
            #expect(claim.isEmpty || (reason.contains(claim) && reason.contains(Self.ada)), "\(reason)")
        }
        guard
            case .forged = try receiver.manager.receive(
                store("plaintext"),
                proof: .none)
        else { throw Failure("plaintext spoke for Ada") }
        #expect(try receiver.manager.inbox().isEmpty)
    }
}
