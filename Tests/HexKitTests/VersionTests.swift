import HexKit
import Testing

@Suite(.timeLimit(.minutes(5))) struct VersionTests {
    @Test(arguments: ["1.0", "1", "1.9.9", "0.5", "", "beta", "v2.0", " 2.0", "１.0"])
    func legacyVersions(_ versionID: String) {
        #expect(HexdVersion.isLegacy(versionID))
    }

    @Test(arguments: ["2.0.0", "2", "2.1-beta", "10.0", HexdVersion.current])
    func currentVersions(_ versionID: String) {
        #expect(!HexdVersion.isLegacy(versionID))
    }
}
