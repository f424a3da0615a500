import HexKit
import HexTestSupport
import Testing

@Suite struct HexdCommandTests {
    @Test func hexdPreparesItsDataDirectoryAndKeepsItsIdentity() throws {
        let directory = try TemporaryDirectory()
        let dataDir = directory.file("data")
        let first = try PackageExecutable.run("hexd", ["--data-dir", dataDir, "--name", "Ada"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("identity: Ada ("))
        #expect(FileManager.default.fileExists(atPath: dataDir + "/hexd.sqlite"))

        // The environment names the directory when no flag does; the identity survives.
        let second = try PackageExecutable.run("hexd", [], environment: ["HEXD_DATA_DIR": dataDir])
        #expect(second.status == 0)
        let identityLine = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("identity:") } }
        #expect(identityLine(second.standardOutput) == identityLine(first.standardOutput))
    }

    @Test func hexdRefusesADatabaseFromANewerVersion() throws {
        let directory = try TemporaryDirectory()
        _ = try PackageExecutable.run("hexd", ["--data-dir", directory.path])
        try Receiver.setUserVersion(99, path: directory.file("hexd.sqlite"))
        let result = try PackageExecutable.run("hexd", ["--data-dir", directory.path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("schema version 99"))
    }

    @Test(arguments: [["--bogus"], ["--name"], ["--data-dir"]])
    func hexdRejectsABadCommandLineWithUsage(_ arguments: [String]) throws {
        let result = try PackageExecutable.run("hexd", arguments)
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("hexd: "))
    }

    @Test func hexdHelpAndVersion() throws {
        let help = try PackageExecutable.run("hexd", ["--help"])
        #expect(help.status == 0 && help.standardOutput.contains("USAGE: hexd") && help.standardOutput.contains("--data-dir"))
        let version = try PackageExecutable.run("hexd", ["--version"])
        #expect(version.standardOutput == HexdVersion.current + "\n")
    }
}
