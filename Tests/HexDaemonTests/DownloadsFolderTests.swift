import HexCommandLine
import HexHarness
import HexKit
import HexTestSupport
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// Where fetched files land by default, how partial files are named and recognised, and the
/// settings that choose them.
@Suite(.timeLimit(.minutes(5))) struct DownloadsFolderTests {
    @Test func theDefaultFolderIsTheUsersForADaemonOfTheirOwnAndTheDataDirectorysOtherwise() throws {
        let home = try TemporaryDirectory()
        let data = DataDirectory(explicit: home.path + "/.local/share/hexd", environment: [:])
        #expect(
            DownloadsFolder.defaultPath(environment: ["HOME": home.path], dataDirectory: data)
                == home.path + "/Downloads")
        #expect(
            DownloadsFolder.defaultPath(
                environment: ["HOME": home.path, "XDG_DOWNLOAD_DIR": "/srv/in"],
                dataDirectory: data) == "/srv/in")
        try FileManager.default.createDirectory(atPath: home.path + "/.config", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: home.path + "/.config/user-dirs.dirs",
                contents: Data(
                    "# written by xdg-user-dirs-update\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n".utf8)))
        #expect(
            DownloadsFolder.defaultPath(environment: ["HOME": home.path], dataDirectory: data)
                == home.path + "/Téléchargements")
        let service = DataDirectory(explicit: "/var/lib/hexd", environment: [:])
        #expect(
            DownloadsFolder.defaultPath(environment: ["HOME": home.path], dataDirectory: service)
                == "/var/lib/hexd/downloads", "a system service has no user's folder")
        #expect(DownloadsFolder.defaultPath(environment: [:], dataDirectory: data) == data.path + "/downloads")
    }

    @Test func aUserDirsFileIsReadStrictly() {
        let home = "/home/ada"
        #expect(DownloadsFolder.userDownloadFolder(in: "XDG_DOWNLOAD_DIR=\"/data/dl\"", home: home) == "/data/dl")
        for text in [
            "XDG_DOWNLOAD_DIR=\"$HOME/\"", "XDG_DOWNLOAD_DIR=\"$HOME\"", "XDG_DOWNLOAD_DIR=relative",
            "XDG_DOWNLOAD_DIR=\"relative\"", "XDG_DESKTOP_DIR=\"$HOME/Desktop\"", "",
        ] {
            #expect(DownloadsFolder.userDownloadFolder(in: text, home: home) == nil, "\(text)")
        }
    }

    @Test func partialFilesAreNamedPerGrantAndRecognised() {
        let folder = DownloadsFolder(path: "/dl")
        let link = PeerFileLink(
            ownerID: "792ABB2D-4116-88D5-9BBF-1D8B05F827DF",
            grant: "b2e01bc68b3a5ba000392401d94a4521", name: "../Q3.pdf")
        #expect(folder.partialPath(for: link) == "/dl/Q3.pdf.b2e01bc68b3a.part")
        #expect(DownloadsFolder.isPartial("Q3.pdf.b2e01bc68b3a.part"))
        for name in ["Q3.pdf.part", "Q3.pdf.b2e01bc68b3.part", "Q3.pdf.b2e01bc68b3ax.part", "notes.txt", ".part"] {
            #expect(!DownloadsFolder.isPartial(name), "\(name)")
        }
    }

    @Test func fileSettingsTakeDurationsSizesAndChoices() throws {
        func resolve(_ arguments: [String]) throws -> FileSettings {
            guard
                case .run(let configuration) = try DaemonConfiguration.resolve(
                    arguments: arguments, environment: [:], readFile: { _ in nil })
            else { throw Unexpected() }
            return configuration.files
        }
        let defaults = try resolve([])
        #expect(defaults.grantLifetime == .seconds(7 * 86_400) && defaults.downloads == nil)
        #expect(!defaults.autoFetchPaired && defaults.maximumSendRate == nil)
        let set = try resolve([
            "--grant-ttl", "2h", "--downloads", "/srv/in", "--auto-fetch", "paired",
            "--max-send-rate", "20MiB",
        ])
        #expect(set.grantLifetime == .seconds(7_200) && set.downloads == "/srv/in" && set.autoFetchPaired)
        #expect(set.maximumSendRate == 20 << 20)
        for bad in [
            ["--grant-ttl", "0"], ["--grant-ttl", "400d"], ["--downloads", "relative"],
            ["--auto-fetch", "all"], ["--max-send-rate", "1MiB"], ["--max-send-rate", "fast"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try resolve(bad) }
        }
    }

    private struct Unexpected: Error {}
}
