import Foundation
import HexKit
import HexNet
import HexTestSupport
import Synchronization
import Testing

@testable import HexDaemon

/// How the peer directory takes what discovery offers while the store is busy: a peer's sightings
/// in order, at most `unpinnedLimit` waiting, none lost at a stop, and a pin change forgetting only
/// its own peer's key. The store is held (as a commit waiting for the disk holds it) until the test
/// lets it go, so nothing here depends on timing.
@Suite struct PeerDirectoryOfferTests {
    @Test func aPeersByeWaitsBehindItsAnnouncementAndSourcesAreToldInOrder() async throws {
        let home = try CarrierHome("Ada")
        let told = Mutex<[PeerTable.Change]>([])
        let tell: PeerDirectory.Taken = { change in told.withLock { $0.append(change) } }
        let uuid = UUID().uuidString
        let (announcement, bye) = (try Self.sighting(uuid, "Bob"), try Self.sighting(uuid, "Bob", leaving: true))
        await home.service.held {
            // Its pinned key unknown, the announcement waits; the bye, which needs no key, waits behind it.
            #expect(await home.peers.offer(announcement, taken: tell))
            #expect(await home.peers.offer(bye, taken: tell))
            #expect(await home.peers.peer(uuid: uuid) == nil)
        }
        await home.peers.carrySightingsOver()
        let changes = told.withLock { $0 }
        #expect(changes.count == 2)
        guard case .found? = changes.first, case .left? = changes.last else {
            Issue.record("told \(changes) instead of found, then left")
            return
        }
        #expect(await home.peers.peer(uuid: uuid) == nil, "the bye was taken last")
    }

    @Test func pastTheLimitASightingWaitingForTheStoreIsDropped() async throws {
        let home = try CarrierHome("Ada")
        let sightings = try (0...PeerDirectory.unpinnedLimit).map { try Self.sighting(UUID().uuidString, "Peer \($0)") }
        var dropped: [Int] = []
        await home.service.held {
            for (index, sighting) in sightings.enumerated() where await !home.peers.offer(sighting) {
                dropped.append(index)
            }
        }
        #expect(dropped == [PeerDirectory.unpinnedLimit], "only the one past the limit is dropped")
        await home.peers.carrySightingsOver()
        #expect(await home.peers.count == 64, "the table, of 64, is full of those that waited")
    }

    @Test func aPeerFoundJustBeforeAStopIsHandedToTheStore() async throws {
        let home = try CarrierHome("Ada")
        let uuid = UUID().uuidString
        let late = try Self.sighting(uuid, "Late")
        await home.service.held {
            #expect(await home.peers.offer(late))
        }
        await home.peers.carrySightingsOver()
        try await home.service.writeSightings()
        #expect(try await home.service.knownPeer(id: uuid)?.name == "Late")
    }

    /// A peer just pinned on first use (the first hex to it) must not go back to the store's queue,
    /// where a flood of invented peers waits: its new key is known at once.
    @Test func aPinWrittenIsKnownAtOnceAndTheOthersStay() async throws {
        let home = try CarrierHome("Ada")
        let (ann, bob) = (UUID().uuidString, UUID().uuidString)
        await home.peers.observe([try Self.sighting(ann, "Ann"), try Self.sighting(bob, "Bob")])
        #expect(home.service.pins.key(of: ann) == .some(nil), "no key pinned to Ann, and that is known")
        let key = String(repeating: "ab", count: 32)
        try await home.service.pinOnFirstUse(peer: ann, fingerprint: key)
        #expect(home.service.pins.key(of: ann) == .some(key), "Ann's new key is known without a read")
        #expect(home.service.pins.key(of: bob) == .some(nil), "Bob's is still known")
    }

    /// A legacy peer's sighting at a loopback address.
    static func sighting(_ uuid: String, _ name: String, leaving: Bool = false) throws -> Sighting {
        Sighting(
            kind: leaving ? .leaving : .present, uuid: uuid, name: name, versionID: "1.0.0", instance: "I1",
            address: try #require(IPAddress("127.0.0.2")), port: 18_521, interval: .seconds(60), capabilities: [],
            fingerprint: nil, isSigned: false)
    }
}
