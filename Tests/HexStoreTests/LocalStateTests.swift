import Glibc
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

    @Test func theDataDirectoryComesFromTheFlagThenTheEnvironment() {
        let environment = ["HEXD_DATA_DIR": "/from/env", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]
        #expect(DataDirectory(explicit: "/flag", environment: environment).path == "/flag")
        #expect(DataDirectory(explicit: nil, environment: environment).path == "/from/env")
        #expect(DataDirectory(explicit: nil, environment: ["XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]).path == "/xdg/hexd")
        #expect(DataDirectory(explicit: nil, environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/hexd")
        #expect(DataDirectory(explicit: "/d", environment: [:]).databasePath == "/d/hexd.sqlite")
    }

    @Test func theDataDirectoryIsCreatedPrivate() throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(explicit: directory.file("a/b/c"), environment: [:])
        try data.create()
        try data.create()
        let attributes = try FileManager.default.attributesOfItem(atPath: data.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(throws: DataDirectoryError.self) { try DataDirectory(explicit: "/proc/forbidden/x", environment: [:]).create() }
    }

    @Test func anExistingDataDirectoryAndItsFilesAreMadePrivate() throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(explicit: directory.file("open"), environment: [:])
        try FileManager.default.createDirectory(atPath: data.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try Receiver.makeDatabase(in: data.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: data.databasePath)
        let tightened = try data.create()
        #expect(tightened.count == 2, "\(tightened)")
        #expect(try FileManager.default.attributesOfItem(atPath: data.path)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: data.databasePath)[.posixPermissions] as? Int == 0o600)
        #expect(try data.create().isEmpty, "nothing to do the second time")
    }

    @Test(.enabled(if: geteuid() == 0, "changing a directory's owner needs root"))
    func aDataDirectoryOfAnotherUserIsRefused() throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(explicit: directory.file("theirs"), environment: [:])
        try data.create()
        #expect(chown(data.path, 65_534, 65_534) == 0)
        #expect { try data.create() } throws: { "\($0)".contains("belongs to user 65534") }
    }

    @Test func aDamagedDatabaseIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file(HexDatabase.fileName)
        try Receiver.damageDatabase(at: path)
        let before = try #require(contents(path))
        #expect { try HexDatabase(path: path) } throws: { error in
            guard case .damaged(_, let findings)? = error as? StoreError else { return false }
            return !findings.isEmpty && "\(error)".contains(".recover")
        }
        #expect(contents(path) == before)
    }
}
