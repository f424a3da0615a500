import HexHarness
import HexKit
import HexStore
import HexTestSupport
import Testing

/// The grants table: a grant reads back whole, is found by a prefix of its id, is revoked once,
/// counts its fetches, and is forgotten once it ended long enough ago.
@Suite(.timeLimit(.minutes(5))) struct GrantTableTests {
    private func grant(_ created: Double, expiresAfter lifetime: Double = 3_600) -> FileGrant {
        let time = Date(timeIntervalSinceReferenceDate: created)
        return FileGrant(
            path: "/home/ada/report \(created).pdf", name: "report \(created).pdf", size: 1 << 40,
            sha256: String(repeating: "ab", count: 32),
            recipientID: "792ABB2D-4116-88D5-9BBF-1D8B05F827DF", recipientName: "Grace",
            created: time, expires: time + lifetime,
            identity: FileIdentity(device: .max, inode: 1 << 63, size: 1 << 40, modified: -5))
    }

    @Test func aGrantReadsBackWholeAndIsFoundByItsPrefix() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let grants = [grant(1), grant(3), grant(2)]
        for item in grants { try database.insertGrant(item) }
        #expect(try database.grant(id: grants[0].id) == grants[0], "every field, the identity's full 64 bits included")
        #expect(try database.grant(id: grants[0].id.uppercased()) == grants[0])
        #expect(try database.grants(limit: 10).map(\.id) == [grants[1].id, grants[2].id, grants[0].id], "newest first")
        #expect(try database.grants(limit: 1).count == 1 && database.grantCount() == 3)
        let prefix = String(grants[0].id.prefix(10)).uppercased()
        #expect(try database.grantIDs(idPrefix: prefix, limit: 2) == [grants[0].id])
        #expect(try database.grantIDs(idPrefix: "", limit: 5).count == 3)

        try database.revokeGrant(id: grants[0].id, at: Date(timeIntervalSinceReferenceDate: 10))
        try database.revokeGrant(id: grants[0].id, at: Date(timeIntervalSinceReferenceDate: 20))
        #expect(
            try database.grant(id: grants[0].id)?.revoked == Date(timeIntervalSinceReferenceDate: 10),
            "the first time is kept")
        try database.recordFetch(ofGrant: grants[1].id, at: Date(timeIntervalSinceReferenceDate: 30))
        try database.recordFetch(ofGrant: grants[1].id, at: Date(timeIntervalSinceReferenceDate: 40))
        let fetched = try #require(try database.grant(id: grants[1].id))
        #expect(fetched.fetches == 2 && fetched.lastFetched == Date(timeIntervalSinceReferenceDate: 40))
        let moved = FileIdentity(device: 1, inode: 2, size: 1 << 40, modified: 3)
        try database.updateGrantIdentity(id: grants[1].id, to: moved)
        #expect(try database.grant(id: grants[1].id)?.identity == moved)
    }

    @Test func endedGrantsAreForgotten() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let expired = grant(0, expiresAfter: 10)
        let revoked = grant(5)
        let current = grant(8)
        for item in [expired, revoked, current] { try database.insertGrant(item) }
        try database.revokeGrant(id: revoked.id, at: Date(timeIntervalSinceReferenceDate: 20))
        #expect(try database.pruneGrants(endedBefore: Date(timeIntervalSinceReferenceDate: 15)) == 1)
        #expect(try database.pruneGrants(endedBefore: Date(timeIntervalSinceReferenceDate: 25)) == 1)
        #expect(try database.grants(limit: 10).map(\.id) == [current.id])
    }
}
