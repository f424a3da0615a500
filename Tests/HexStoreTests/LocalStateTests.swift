import HexCommandLine
import HexHarness
import HexKit
import HexStore
import HexTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct LocalStateTests {
    @Test func theIdentityIsStableAcrossRestartsAndTheNameCanChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let first = try HexDatabase(path: path).localIdentity().identity
        #expect(first.name == LocalIdentity.defaultName)
        #expect(first.uuid == first.uuid.uppercased() && UUID(strict: first.uuid)?.isKeyDerived == false)

        let renamed = try HexDatabase(path: path).localIdentity(name: "  Ada Lovelace\n").identity
        #expect(renamed.uuid == first.uuid && renamed.name == "Ada Lovelace")
        #expect(try HexDatabase(path: path).localIdentity().identity == renamed, "the name is kept until changed")
        #expect(try HexDatabase(path: path).localIdentity(name: "   ").identity.name == LocalIdentity.defaultName)
        #expect(try HexDatabase(path: directory.file("other.sqlite")).localIdentity().identity.uuid != first.uuid)
    }

    /// A data directory from before IDs were derived from keys takes the derived ID once, says
    /// which UUID it replaced, and keeps the old one for playing a legacy peer (plaintext may
    /// never claim a derived ID).
    @Test func aDerivedIDReplacesTheStoredUUIDOnceAndTheLegacyUUIDIsKept() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let old = try HexDatabase(path: path).localIdentity(name: "Ada").identity.uuid
        let derived = try #require(UUID(strict: "6F9619FF-8B86-8011-B42D-00C04FC964FF"))
        let adopted = try HexDatabase(path: path).localIdentity(deviceID: derived)
        #expect(
            adopted.identity.uuid == derived.uppercaseText && adopted.replaced == old
                && adopted.identity.name == "Ada")
        let again = try HexDatabase(path: path).localIdentity(deviceID: derived)
        #expect(again.identity.uuid == derived.uppercaseText && again.replaced == nil, "replaced once, then kept")
        #expect(
            try HexDatabase(path: path).localIdentity().identity.uuid == old,
            "playing a legacy peer keeps the old UUID")
        let fresh = try HexDatabase(path: directory.file("fresh.sqlite"))
        _ = try fresh.localIdentity(deviceID: derived)
        let legacy = try fresh.localIdentity().identity.uuid
        let legacyAgain = try fresh.localIdentity().identity.uuid
        #expect(UUID(strict: legacy)?.isKeyDerived == false && legacy == legacyAgain)
        let clockBehind = Date(timeIntervalSince1970: 1)
        #expect(try fresh.nextBootNumber(at: clockBehind) == (1_000, true), "the clock's milliseconds")
        #expect(
            try fresh.nextBootNumber(at: clockBehind) == (1_001, true),
            "after the last, though the clock is behind it")
    }

    @Test func sightingsUpdateAPeerAndKeepWhenItWasFirstSeen() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        try database.recordSighting(uuid: "aaaa", name: "A", versionID: "1.0", address: "10.0.0.1:18521", at: start)
        try database.recordSighting(
            uuid: "BBBB", name: "B", versionID: "2.0.0", address: "10.0.0.2:18521", at: start + 5)
        try database.recordSighting(
            uuid: "AAAA", name: "A2", versionID: "2.0.0", address: "10.0.0.9:18521", at: start + 10)
        let peers = try database.knownPeers()
        #expect(
            peers == [
                KnownPeer(
                    uuid: "AAAA", name: "A2", versionID: "2.0.0", address: "10.0.0.9:18521", firstSeen: start,
                    lastSeen: start + 10),
                KnownPeer(
                    uuid: "BBBB", name: "B", versionID: "2.0.0", address: "10.0.0.2:18521", firstSeen: start + 5,
                    lastSeen: start + 5),
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
