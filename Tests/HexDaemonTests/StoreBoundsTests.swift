import HexCommandLine
import HexControl
import HexHarness
import HexKit
import HexStore
import HexTestSupport
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// What a daemon keeps on disk for others is bounded, as Protocol.md's budgets say: the outbox
/// (10,000 sends, 256 MiB) and the peers remembered (4,096, 90 days). Real SQLite files.
@Suite(.timeLimit(.minutes(5))) struct StoreBoundsTests {
    private func service() throws -> (HexService, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let service = try HexService(
            dataDirectory: DataDirectory(explicit: directory.path, environment: [:]),
            name: "Ada", deviceID: nil, versionID: HexdVersion.current,
            logger: Logger(level: .error))
        return (service, directory)
    }

    private func entry(envelope: String) -> OutboxEntry {
        let now = Date()
        return OutboxEntry(
            messageID: UUID().uuidString, peerUUID: "PEER", address: nil, label: "Grace", kind: .hex,
            envelope: envelope, legacy: false, createdAt: now, expiresAt: now + 60, nextAttemptAt: now)
    }

    @Test func theOutboxHoldsTenThousandSendsAndAQuarterGigabyte() {
        #expect(Outbox.capacity == OutboxUsage(entries: 10_000, bytes: 256 << 20))
    }

    @Test func aSendPastEitherBoundOfTheOutboxIsRefusedAndAQueuedOneIsNot() async throws {
        let (store, directory) = try service()
        let capacity = OutboxUsage(entries: 3, bytes: 100)
        let first = entry(envelope: String(repeating: "x", count: 60))
        #expect(try await store.enqueue(first, capacity: capacity).isNew)
        await #expect(throws: OutboxError.self, "60 + 41 bytes is past 100") {
            _ = try await store.enqueue(entry(envelope: String(repeating: "x", count: 41)), capacity: capacity)
        }
        let filling = entry(envelope: String(repeating: "x", count: 40))
        #expect(try await store.enqueue(filling, capacity: capacity).isNew, "exactly 100 fits")
        #expect(try await store.enqueue(first, capacity: capacity).isNew == false, "the same send again is no new send")
        let third = try await store.enqueue(entry(envelope: "{}"), capacity: OutboxUsage(entries: 3, bytes: 1_000))
        #expect(third.isNew)
        let refusal = await #expect(throws: OutboxError.self, "a fourth send is past 3 entries") {
            _ = try await store.enqueue(entry(envelope: "{}"), capacity: OutboxUsage(entries: 3, bytes: 1_000))
        }
        // What the sender's client is told: unreachable for now, naming the bound.
        let reported = refusal.map { ControlError(reporting: $0) }
        #expect(reported?.code == .unreachable)
        #expect(reported?.message.contains("the outbox is full (3 sends") == true, "\(String(describing: reported))")
        withExtendedLifetime(directory) {}
    }

    @Test func peersRememberedAreThe4096SeenLastAndNoneOlderThan90Days() async throws {
        let (store, directory) = try service()
        let database = try HexDatabase(path: directory.file("hexd.sqlite"))
        let old = UUID().uuidString
        try database.recordSighting(
            uuid: old, name: "Old", versionID: "2.0.0", address: "127.0.0.9",
            at: Date() - 91 * 86_400)
        let total = HexService.maximumSightings + HexService.sightingsPerPrune
        let uuids = (0..<total).map { _ in UUID().uuidString }
        for (index, uuid) in uuids.enumerated() {
            try await store.recordSightings([
                HexService.SeenPeer(uuid: uuid, name: "peer \(index)", versionID: "2.0.0", address: "127.0.0.1")
            ])
        }
        let remembered = try database.knownPeers()
        #expect(remembered.count == 4_096, "\(remembered.count) remembered")
        #expect(!remembered.contains { $0.uuid == old }, "a sighting older than 90 days is forgotten")
        #expect(Set(remembered.map(\.uuid)).isSubset(of: Set(uuids)), "only recent sightings are kept")
    }
}
