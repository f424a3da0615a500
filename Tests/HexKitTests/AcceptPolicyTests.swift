import HexKit
import HexTestSupport
import Testing

/// `hexd --accept`: whose Stores and Alerts are taken, and that a refused stranger is not pinned.
@Suite(.timeLimit(.minutes(5))) struct AcceptPolicyTests {
    static let ada = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
    static let adaKey = String(repeating: "a1", count: 32)
    static let stranger = "11111111-2222-8333-8444-555555555555"
    static let strangerKey = String(repeating: "e5", count: 32)
    static let adaProof = SenderProof.key(fingerprint: adaKey, deviceID: ada)
    static let strangerProof = SenderProof.key(fingerprint: strangerKey, deviceID: stranger)
    static let legacy = "99999999-2222-4333-8444-555555555555"

    private func store(from sender: String) -> Envelope {
        .store(
            HexJM(
                senderUUID: sender, senderName: "someone", hexDescription: "from \(sender)", hexColor: "#3498DB",
                links: [LinkJM(url: "https://a.example/x")]),
            versionID: "2.0.0", messageID: UUID().uuidString)
    }

    private let alert = Envelope.alert("hello", versionID: "2.0.0", messageID: UUID().uuidString)

    /// A receiver where Ada's key is pinned with `adaTrust`.
    private func receiver(_ policy: AcceptPolicy, adaTrust: SenderTrust) throws -> Receiver {
        let receiver = try Receiver(accepting: policy)
        try receiver.database.setPin(PeerPin(peerUUID: Self.ada, fingerprint: Self.adaKey, trust: adaTrust))
        return receiver
    }

    private func stored(_ outcome: ReceiveOutcome) -> Bool {
        if case .stored = outcome { true } else { false }
    }

    @Test(arguments: [
        // policy, Ada's pin, Ada stored, stranger stored, legacy stored
        (AcceptPolicy.anyone, SenderTrust.pinned, true, true, true),
        (.known, .pinned, true, false, false),
        (.known, .paired, true, false, false),
        (.paired, .pinned, false, false, false),
        (.paired, .paired, true, false, false),
    ])
    func eachPolicyTakesItsSendersOnly(
        policy: AcceptPolicy, adaTrust: SenderTrust, ada: Bool, stranger: Bool, legacy: Bool
    ) throws {
        let receiver = try receiver(policy, adaTrust: adaTrust)
        #expect(stored(try receiver.manager.receive(store(from: Self.ada), proof: Self.adaProof)) == ada)
        #expect(stored(try receiver.manager.receive(store(from: Self.stranger), proof: Self.strangerProof)) == stranger)
        #expect(stored(try receiver.manager.receive(store(from: Self.legacy), proof: .none)) == legacy)
        #expect(try receiver.manager.inbox().count == [ada, stranger, legacy].filter { $0 }.count)
        #expect(
            (try receiver.database.pin(forPeer: Self.stranger) != nil) == stranger,
            "a refused stranger's key is not pinned")
    }

    @Test func aRefusalSaysWhomTheDaemonTakes() throws {
        let receiver = try receiver(.paired, adaTrust: .pinned)
        let outcome = try receiver.manager.receive(store(from: Self.ada), proof: Self.adaProof)
        #expect(outcome == .rejected(alert: "\(Receiver.name) accepts hexes only from paired peers."))
        #expect(outcome.ackStatus == .rejected)
    }

    @Test func alertsFollowThePolicyToo() throws {
        let known = try receiver(.known, adaTrust: .pinned)
        let kept = try known.manager.receive(alert, proof: Self.adaProof).keptAlert
        #expect(kept?.message == "hello" && kept?.senderID == Self.ada)
        #expect(try known.manager.receive(alert, proof: Self.strangerProof).ackStatus == .rejected)
        #expect(try known.manager.receive(alert, proof: .none).ackStatus == .rejected)
        let paired = try receiver(.paired, adaTrust: .pinned)
        #expect(try paired.manager.receive(alert, proof: Self.adaProof).ackStatus == .rejected)
        let anyone = try receiver(.anyone, adaTrust: .pinned)
        let plaintext = try anyone.manager.receive(alert, proof: .none).keptAlert
        #expect(plaintext?.message == "hello" && plaintext?.senderID == nil)
    }
}
