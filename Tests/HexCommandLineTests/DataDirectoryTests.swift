import Foundation
import Glibc
import HexCommandLine
import HexHarness
import HexStore
import HexTestSupport
import HexTestTools
import Testing

@Suite(.timeLimit(.minutes(5))) struct DataDirectoryTests {
    @Test func theDataDirectoryComesFromTheFlagThenTheEnvironment() {
        let environment = ["HEXD_DATA_DIR": "/from/env", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]
        #expect(DataDirectory(explicit: "/flag", environment: environment).path == "/flag")
        #expect(DataDirectory(explicit: nil, environment: environment).path == "/from/env")
        #expect(
            DataDirectory(explicit: nil, environment: ["XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]).path == "/xdg/hexd")
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
        #expect(throws: DataDirectoryError.self) {
            try DataDirectory(explicit: "/proc/forbidden/x", environment: [:]).create()
        }
    }

    @Test func anExistingDataDirectoryAndItsFilesAreMadePrivate() throws {
        let directory = try TemporaryDirectory()
        let data = DataDirectory(explicit: directory.file("open"), environment: [:])
        try FileManager.default.createDirectory(
            atPath: data.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try Receiver.makeDatabase(in: data.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: data.databasePath)
        let tightened = try data.create()
        #expect(tightened.count == 2, "\(tightened)")
        #expect(try FileManager.default.attributesOfItem(atPath: data.path)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: data.databasePath)[.posixPermissions] as? Int == 0o600)
        #expect(try data.create().isEmpty, "nothing to do the second time")
    }

    @Test func aDataDirectoryOfAnotherUserIsRefused() throws {
        try ExternalTool.requireRoot()  // changing a directory's owner needs root
        let directory = try TemporaryDirectory()
        let data = DataDirectory(explicit: directory.file("theirs"), environment: [:])
        try data.create()
        #expect(chown(data.path, 65_534, 65_534) == 0)
        #expect { try data.create() } throws: { "\($0)".contains("belongs to user 65534") }
    }

    @Test func everyFileOfTheLayoutIsNamedOnce() {
        let data = DataDirectory(explicit: "/d", environment: [:])
        #expect(
            [data.databasePath, data.socketPath, data.lockPath, data.configPath] == [
                "/d/hexd.sqlite", "/d/hexd.sock", "/d/hexd.lock", "/d/hexd.conf",
            ])
    }
}
