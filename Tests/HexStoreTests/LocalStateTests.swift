import HexCommandLine
import HexKit
import HexStore
import HexTestSupport
import Testing

@Suite struct LocalStateTests {
    @Test func theIdentityIsStableAcrossRestartsAndTheNameCanChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let first = try HexDatabase(path: path).localIdentity()
        #expect(first.name == LocalIdentity.defaultName)
        #expect(first.uuid == first.uuid.uppercased() && UUID(uuidString: first.uuid) != nil)

        let renamed = try HexDatabase(path: path).localIdentity(name: "  Ada Lovelace\n")
        #expect(renamed.uuid == first.uuid && renamed.name == "Ada Lovelace")
        #expect(try HexDatabase(path: path).localIdentity() == renamed, "the name is kept until changed")
        #expect(try HexDatabase(path: path).localIdentity(name: "   ").name == LocalIdentity.defaultName)
        #expect(try HexDatabase(path: directory.file("other.sqlite")).localIdentity().uuid != first.uuid)
    }

    @Test func sightingsUpdateAPeerAndKeepWhenItWasFirstSeen() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        try database.recordSighting(uuid: "aaaa", name: "A", versionID: "1.0", address: "10.0.0.1:18521", at: start)
        try database.recordSighting(uuid: "BBBB", name: "B", versionID: "2.0.0", address: "10.0.0.2:18521", at: start + 5)
        try database.recordSighting(uuid: "AAAA", name: "A2", versionID: "2.0.0", address: "10.0.0.9:18521", at: start + 10)
        let peers = try database.knownPeers()
        #expect(peers == [
            KnownPeer(uuid: "AAAA", name: "A2", versionID: "2.0.0", address: "10.0.0.9:18521", firstSeen: start, lastSeen: start + 10),
            KnownPeer(uuid: "BBBB", name: "B", versionID: "2.0.0", address: "10.0.0.2:18521", firstSeen: start + 5, lastSeen: start + 5),
        ])
    }

    @Test func aDamagedDatabaseIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file(DataDirectory.databaseName)
        try Receiver.damageDatabase(at: path)
        let before = try #require(contents(path))
        #expect { try HexDatabase(path: path) } throws: { error in
            guard case .damaged(_, let findings)? = error as? StoreError else { return false }
            return !findings.isEmpty && "\(error)".contains(".recover")
        }
        #expect(contents(path) == before)
    }
}
