import Foundation
import HexKit
import HexStore
import HexTestSupport
import Testing

/// The inbox's budgets and the disk's floors as HexManager applies them, over a real database.
@Suite(.timeLimit(.minutes(5))) struct InboxBudgetTests {
    private static func store(from sender: String, bytes: Int, id: String = UUID().uuidString) -> Envelope {
        .store(
            HexJM(
                senderUUID: sender, senderName: "S", hexDescription: "d", hexColor: "#FF0000",
                links: [LinkJM(url: "https://x.example/" + String(repeating: "x", count: bytes))]),
            versionID: HexdVersion.current, messageID: id)
    }

    private static let key = SenderProof.key(
        fingerprint: String(repeating: "a", count: 64),
        deviceID: "6F9619FF-8B86-8011-B42D-00C04FC964FF")

    @Test func aSenderPastItsShareIsRefusedWholeAndARepeatIsStillADuplicate() throws {
        let receiver = try Receiver()
        receiver.manager.budget = InboxBudget(inbox: 1 << 20, perSender: 10_000, strangers: 1 << 20)
        let first = Self.store(from: "6F9619FF-8B86-8011-B42D-00C04FC964FF", bytes: 4_000)
        #expect(try receiver.manager.receive(first, proof: Self.key).ackStatus == .stored)
        #expect(
            try receiver.manager.receive(
                Self.store(from: "6F9619FF-8B86-8011-B42D-00C04FC964FF", bytes: 4_000),
                proof: Self.key
            ).ackStatus == .stored)
        let third = try receiver.manager.receive(
            Self.store(from: "6F9619FF-8B86-8011-B42D-00C04FC964FF", bytes: 4_000),
            proof: Self.key)
        guard case .noRoom(.senderBudget(let used, 10_000), let account) = third else {
            Issue.record("expected the sender's budget, got \(third)")
            return
        }
        #expect(account == .key("6F9619FF-8B86-8011-B42D-00C04FC964FF") && used == receiver.manager.usage.total)
        #expect(third.ackStatus == .rejected && third.explanation.contains("--sender-budget"))
        #expect(try receiver.manager.receive(first, proof: Self.key) == .duplicate)
        #expect(try receiver.manager.counts().inbox == 2)
    }

    @Test func plaintextSharesArePerAddressAndAllStrangersShareOneBudget() throws {
        let receiver = try Receiver()
        receiver.manager.budget = InboxBudget(inbox: 1 << 20, perSender: 9_000, strangers: 12_000)
        func plaintext(from address: String) throws -> ReceiveOutcome {
            try receiver.manager.receive(Self.store(from: UUID().uuidString, bytes: 4_000), from: address)
        }
        #expect(try plaintext(from: "192.0.2.1").ackStatus == .stored)
        #expect(try plaintext(from: "192.0.2.1").ackStatus == .stored)
        guard case .noRoom(.senderBudget, .address("192.0.2.1")) = try plaintext(from: "192.0.2.1") else {
            Issue.record("a new UUID is no new share")
            return
        }
        guard case .noRoom(.strangersBudget, _) = try plaintext(from: "192.0.2.2") else {
            Issue.record("another address still counts against the strangers' budget")
            return
        }
    }

    @Test func aPairedSenderIsHeldToTheInboxBudgetAlone() throws {
        let receiver = try Receiver()
        let deviceID = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
        try receiver.database.setPin(
            PeerPin(
                peerUUID: deviceID, fingerprint: String(repeating: "a", count: 64),
                trust: .paired))
        try receiver.manager.loadUsage()
        receiver.manager.budget = InboxBudget(inbox: 20_000, perSender: 1_000, strangers: 1_000)
        for _ in 0..<4 {
            let outcome = try receiver.manager.receive(Self.store(from: deviceID, bytes: 4_000), proof: Self.key)
            #expect(outcome.ackStatus == .stored)
        }
        guard
            case .noRoom(.inboxBudget, _) = try receiver.manager.receive(
                Self.store(from: deviceID, bytes: 4_000),
                proof: Self.key)
        else {
            Issue.record("the inbox's budget holds for paired senders too")
            return
        }
        #expect(receiver.manager.usage.strangers == 0 && receiver.manager.usage.total > 16_000)
    }

    /// A device's files (LocalSend's, say) are asked about before they are written (`admission`, which
    /// stores nothing), and count against its share with the hex that links to them, until that
    /// hex is deleted.
    @Test func filesCountWithTheirHexAndAreAskedAboutFirst() throws {
        let receiver = try Receiver()
        receiver.manager.budget = InboxBudget(inbox: 1 << 30, perSender: 1 << 20, strangers: 1 << 30)
        let device = ExampleIDForms.provedDevice()
        let proof = SenderProof.key(fingerprint: String(repeating: "c", count: 64), deviceID: device)
        #expect(
            try receiver.manager.admission(of: device, proof: proof, from: "192.0.2.7", bytes: 600_000) == .admitted)
        #expect(receiver.manager.usage.total == 0, "asking stores nothing")
        let files = ForeignMessage(color: "#0EA5A4").hex(
            files: [("a.bin", "/tmp/a.bin")], from: "Pixel", senderID: device)
        let stored = try receiver.manager.receive(
            .store(files, versionID: "LocalSend 2.1", messageID: UUID().uuidString), proof: proof,
            attachedBytes: 600_000)
        guard case .stored(let hex) = stored else {
            Issue.record("expected stored, got \(stored)")
            return
        }
        #expect(receiver.manager.usage.used(by: .key(device)) == hex.storedBytes + 600_000)
        let beyond = try receiver.manager.admission(of: device, proof: proof, from: "192.0.2.7", bytes: 600_000)
        guard case .askPerson(.noRoom(.senderBudget, .key(device))) = beyond else {
            Issue.record("expected the sender's budget, got \(String(describing: beyond))")
            return
        }
        var reread = receiver.manager
        try reread.loadUsage()
        #expect(reread.usage.used(by: .key(device)) == hex.storedBytes + 600_000, "the database holds the charge")
        try receiver.manager.delete(id: hex.id)
        #expect(
            try receiver.manager.admission(of: device, proof: proof, from: "192.0.2.7", bytes: 600_000) == .admitted)
        let plaintext = try receiver.manager.admission(of: "", proof: .none, from: "192.0.2.8", bytes: 2 << 20)
        guard case .refused(.noRoom) = plaintext else {
            Issue.record("a sender without a key cannot be let in by its person: \(plaintext)")
            return
        }
        _ = try receiver.manager.block(senderUUID: device)
        let blocked = try receiver.manager.admission(of: device, proof: proof, from: "192.0.2.7", bytes: 1)
        guard case .refused(let outcome) = blocked else {
            Issue.record("blocked, yet \(blocked)")
            return
        }
        #expect(outcome.ackStatus == .rejected && outcome.explanation.contains("blocked"))
    }

    private struct RolledBack: Error {}

    /// What is counted in memory is what the database holds, read again: after deletes, after a
    /// batch whose commit failed, and after a pairing moved a sender out of the strangers.
    @Test func theCountsFollowTheDatabase() throws {
        let receiver = try Receiver()
        func reread() throws -> InboxUsage {
            var fresh = receiver.manager
            try fresh.loadUsage()
            return fresh.usage
        }
        var ids: [UUID] = []
        for index in 0..<6 {
            let outcome = try receiver.manager.receive(
                Self.store(from: UUID().uuidString, bytes: 1_000 * index),
                from: "192.0.2.\(index % 2)")
            if case .stored(let hex) = outcome { ids.append(hex.id) }
        }
        #expect(ids.count == 6 && receiver.manager.usage.total > 15_000)
        try receiver.manager.delete(id: ids[2])
        _ = try receiver.manager.createHex(
            description: "own",
            links: [
                Link(url: "https://own.example", linkDescription: "", service: .unknown)
            ])
        receiver.manager.beginBatch()
        #expect(throws: RolledBack.self) {
            try receiver.database.transaction {
                _ = try receiver.manager.receive(Self.store(from: UUID().uuidString, bytes: 5_000), from: "192.0.2.9")
                throw RolledBack()
            }
        }
        receiver.manager.rollBackBatch()
        #expect(try reread().total == receiver.manager.usage.total)
        #expect(try reread().used(by: .address("192.0.2.0")) == receiver.manager.usage.used(by: .address("192.0.2.0")))
        #expect(receiver.manager.usage.used(by: .address("192.0.2.9")) == 0)

        let deviceID = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
        let paired = try receiver.manager.receive(Self.store(from: deviceID, bytes: 2_000), proof: Self.key)
        #expect(paired.ackStatus == .stored)
        let before = receiver.manager.usage.strangers
        try receiver.database.setPin(
            PeerPin(
                peerUUID: deviceID, fingerprint: String(repeating: "a", count: 64),
                trust: .paired))
        try receiver.manager.pairingsChanged()
        #expect(receiver.manager.usage.strangers == before - receiver.manager.usage.used(by: .key(deviceID)))
        #expect(try reread().strangers == receiver.manager.usage.strangers)
    }

    @Test func theDiskFloorsRefuseStrangersFirstAndThenEveryone() {
        let room = DiskRoom(free: 100_000, floor: 60_000, hardFloor: 20_000)
        #expect(room.refusal(ofBytes: 10_000, paired: false) == nil)
        #expect(room.refusal(ofBytes: 30_000, paired: false) == .diskFloor(free: 100_000, floor: 60_000))
        #expect(room.refusal(ofBytes: 30_000, paired: true) == nil)
        #expect(room.refusal(ofBytes: 45_000, paired: true) == .diskHardFloor(free: 100_000, floor: 20_000))
        #expect(room.refusal(ofBytes: .max, paired: true) != nil, "no overflow, whatever the size")
        var spent = room
        spent.spend(.max)
        spent.spend(.max)
        #expect(spent.free == .min && spent.refusal(ofBytes: 0, paired: true) != nil)
        #expect(StorageRefusal.diskFloor(free: 1, floor: 2).ackStatus == .failed)
        #expect(StorageRefusal.strangersBudget(used: 1, budget: 2).ackStatus == .rejected)
    }

    @Test(arguments: [
        ("32MiB", 32 << 20), ("1 GiB", 1 << 30), ("4096", 4_096), ("512k", 512 << 10), ("0", 0),
        ("2TB", 2 << 40),
    ])
    func sizesAreReadInBinaryUnits(_ text: String, _ bytes: Int) {
        #expect(ByteCount.parse(text) == bytes)
    }

    @Test(arguments: ["", "MiB", "-1", "1.5MiB", "12 parsecs", "99999999999999999999", "9000000000000000000k"])
    func whatIsNotASizeIsRefused(_ text: String) {
        #expect(ByteCount.parse(text) == nil)
    }

    @Test func sizesAreShownInTheLargestUnitTheyReach() {
        #expect(ByteCount.text(512) == "512 bytes")
        #expect(ByteCount.text(1_536) == "1.5 KiB")
        #expect(ByteCount.text(32 << 20) == "32.0 MiB")
        #expect(ByteCount.text(3 << 40) == "3.0 TiB")
    }
}
