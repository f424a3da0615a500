import HexHarness
import HexKit
import HexStore
import HexTestSupport
import Testing

/// The outbox table: one entry per messageID, due in the order sends were queued, paged, and
/// rescheduled by peer.
@Suite(.timeLimit(.minutes(5))) struct OutboxTableTests {
    private func entry(_ created: Double, peer: String? = "PEER", address: String? = nil) -> OutboxEntry {
        let time = Date(timeIntervalSinceReferenceDate: created)
        return OutboxEntry(
            messageID: UUID().uuidString, peerUUID: peer, address: address, label: "Grace", kind: .hex, envelope: "{}",
            legacy: false, createdAt: time, expiresAt: time + 3_600,
            nextAttemptAt: Date(timeIntervalSinceReferenceDate: 100))
    }

    @Test func sendsAreDueInTheOrderTheyWereQueuedAndPaged() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let queued = [entry(3), entry(1), entry(2)]
        for item in queued { _ = try database.enqueue(item) }
        let due = try database.dueOutboxEntries(at: Date(timeIntervalSinceReferenceDate: 100), limit: 10)
        #expect(
            due.map(\.createdAt) == [1, 2, 3].map { Date(timeIntervalSinceReferenceDate: $0) },
            "same next attempt: oldest first, whatever the ids")
        #expect(try database.dueOutboxEntries(at: Date(timeIntervalSinceReferenceDate: 99), limit: 10).isEmpty)
        let first = try database.outboxEntries(after: nil, limit: 2)
        let rest = try database.outboxEntries(after: first.last?.messageID, limit: 2)
        #expect((first + rest).map(\.messageID) == due.map(\.messageID))

        var again = queued[0]
        again.label = "changed"
        #expect(
            try !database.enqueue(again) && database.outboxEntry(messageID: again.messageID)?.label == "Grace",
            "one entry per messageID: the first stays")
        #expect(try database.outboxUsage() == OutboxUsage(entries: 3, bytes: 6))
    }

    @Test func aPeersBeaconMakesOnlyItsOwnSendsDue() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let byPeer = entry(1)
        let byAddress = entry(2, peer: "PEER", address: "127.0.0.1:9")
        let other = entry(3, peer: "OTHER")
        for item in [byPeer, byAddress, other] { _ = try database.enqueue(item) }
        let now = Date(timeIntervalSinceReferenceDate: 50)
        #expect(
            try database.makeOutboxDue(peerUUID: "peer", at: now) == 1,
            "not the send bound to an address, nor another peer's")
        #expect(try database.dueOutboxEntries(at: now, limit: 10).map(\.messageID) == [byPeer.messageID])
        #expect(try database.recordFailedAttempt(messageID: byPeer.messageID, error: "away", nextAttemptAt: now + 10))
        #expect(try database.outboxEntry(messageID: byPeer.messageID)?.attempts == 1)
        #expect(
            try database.removeFromOutbox(messageID: byPeer.messageID)
                && !database.removeFromOutbox(messageID: byPeer.messageID))
        #expect(try database.makeOutboxDue(peerUUID: nil, at: now) == 2)
    }

    @Test func aDeviceOfAnotherKindIsMadeDueByItsOwnSpelling() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let device = "kdeconnect:" + String(repeating: "ab", count: 16)
        let queued = entry(1, peer: device)
        _ = try database.enqueue(queued)
        let now = Date(timeIntervalSinceReferenceDate: 50)
        #expect(try database.makeOutboxDue(peerUUID: device, at: now) == 1, "the ID as the device goes by it")
        #expect(try database.dueOutboxEntries(at: now, limit: 10).map(\.peerUUID) == [device], "kept as it was given")
    }
}
