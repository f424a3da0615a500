import Foundation
import Glibc
import HexControl
import HexHarness
import HexKit
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// Files shared peer to peer (`share --to`, the `peer` provider) and fetched (`hexctl fetch`)
    /// between real daemons on loopback: whole, resumed, refused to anyone else, named safely.
    @Suite struct FileFetchTests {
        static let mebibyte = 1 << 20

        /// Writes `mebibytes` of random bytes to `path`.
        static func randomFile(_ path: String, mebibytes: Int) async throws {
            let made = try await PackageExecutable.run(
                "/bin/sh", ["-c", "head -c \(mebibytes)M /dev/urandom > \"$0\"", path], timeout: .seconds(60))
            #expect(made.status == 0, "\(made.standardError)")
        }

        /// The file's SHA-256 as `sha256sum` (a tool we did not write) computes it.
        static func sha256(_ path: String) async throws -> String {
            let tool = try ExternalTool.require("sha256sum")
            let result = try await PackageExecutable.run(tool, [path], timeout: .seconds(60))
            return String(result.standardOutput.prefix(64))
        }

        static func size(_ path: String) -> Int {
            var status = stat()
            return stat(path, &status) == 0 ? Int(status.st_size) : -1
        }

        /// The one partial file in `folder`, and its size.
        static func partial(in folder: String) -> (path: String, size: Int)? {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.first { $0.hasSuffix(".part") }.map { (folder + "/" + $0, size(folder + "/" + $0)) }
        }

        /// Shares `paths` from `owner` to `recipient` and returns the hex that arrived.
        static func share(
            _ paths: [String], from owner: DaemonProcess, to recipient: DaemonProcess
        ) async throws -> Hex {
            let shared = try await owner.hexctl(
                ["share", "--to", recipient.name, "-d", "files"] + paths,
                timeout: .seconds(120))
            #expect(shared.status == 0, "\(shared.standardError)")
            return try #require(try await recipient.newestInboxHex())
        }

        /// `hexctl fetch --json`: the reports, and how it ended.
        static func fetch(
            _ hex: String, _ arguments: [String] = [], by daemon: DaemonProcess
        ) async throws -> (status: Int32, reports: [FetchReport], errors: String) {
            let result = try await daemon.hexctl(["fetch", hex, "--json"] + arguments, timeout: .seconds(120))
            let decoder = JSONDecoder()
            let reports = try result.standardOutput.split(separator: "\n").map {
                try decoder.decode(FetchReport.self, from: Data($0.utf8))
            }
            return (result.status, reports, result.standardError)
        }

        /// Two daemons that list each other, on a discovery port of their own (returned too).
        static func pair(_ owner: String, _ recipient: String, in work: TemporaryDirectory, extra: [String] = [])
            async throws -> (DaemonProcess, DaemonProcess, UInt16)
        {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: owner, discoveryPort: port, extraArguments: extra)
            let grace = try await DaemonProcess(
                name: recipient, discoveryPort: port,
                extraArguments: ["--downloads", work.file("\(recipient)-downloads")])
            try await waitUntil("\(owner) lists \(recipient)", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == recipient }
            }
            return (ada, grace, port)
        }

        @Test func aSharedFileArrivesWholeForItsRecipientAlone() async throws {
            let work = try TemporaryDirectory()
            let (ada, grace, port) = try await Self.pair("Ada", "Grace", in: work)
            let bob = try await DaemonProcess(
                name: "Bob", discoveryPort: port,
                extraArguments: ["--downloads", work.file("bob-downloads")])
            let original = work.file("film.mkv")
            // Many chunks of the connection and of the partial file: 64 MiB.
            try await Self.randomFile(original, mebibytes: 64)
            let hex = try await Self.share([original], from: ada, to: grace)
            let firstLink = try #require(hex.links.first)
            let link = try #require(PeerFileLink(firstLink.url))
            #expect(link.name == "film.mkv" && hex.links.first?.linkDescription == "film.mkv")

            let fetched = try await Self.fetch(hex.id.uuidString, by: grace)
            #expect(fetched.status == 0, "\(fetched.errors)")
            let report = try #require(fetched.reports.last)
            #expect(report.state == .fetched && report.size == Int64(64 * Self.mebibyte) && report.resumedFrom == nil)
            #expect(fetched.reports.dropLast().allSatisfy { $0.state == .fetching }, "progress comes before the end")
            #expect(report.path == work.file("Grace-downloads/film.mkv"))
            let originalSHA256 = try await Self.sha256(original)
            #expect(try await Self.sha256(work.file("Grace-downloads/film.mkv")) == originalSHA256)
            #expect(report.sha256 == originalSHA256)
            #expect(Self.partial(in: work.file("Grace-downloads")) == nil, "no partial file is left behind")

            // Forwarded to Bob, the link fetches nothing: the grant is Grace's key's.
            try await waitUntil("Grace lists Bob", timeout: .seconds(10)) {
                try await grace.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Bob" }
            }
            let forwarded = try await grace.hexctl(["send", "--to", "Bob", "-d", "fwd", link.text])
            #expect(forwarded.status == 0, "\(forwarded.standardError)")
            let atBob = try #require(try await bob.newestInboxHex())
            let stolen = try await Self.fetch(atBob.id.uuidString, by: bob)
            #expect(stolen.status == 77 && stolen.reports.last?.state == .failed, "\(stolen)")
            #expect(stolen.errors.contains("notFound"), "\(stolen.errors)")
            let bobFiles = (try? FileManager.default.contentsOfDirectory(atPath: work.file("bob-downloads"))) ?? []
            #expect(bobFiles.isEmpty, "a refused fetch leaves nothing: \(bobFiles)")

            // The owner keeps charge: the grant is listed, fetched once, and once revoked is refused.
            let grants = try await ada.hexctlJSONLines(FileGrant.self, ["grants"])
            #expect(grants.count == 1 && grants.first?.fetches == 1 && grants.first?.recipientName == "Grace")
            let revoked = try await ada.hexctl(["revoke", String(link.grant.prefix(6))])
            #expect(revoked.status == 0 && revoked.standardOutput.contains("revoked"), "\(revoked.standardError)")
            let again = try await Self.fetch(hex.id.uuidString, by: grace)
            #expect(again.status == 77 && again.errors.contains("revoked"), "\(again.errors)")
            #expect(try await ada.hexctlJSONLines(FileGrant.self, ["grants"]).first?.revoked != nil)
        }

        /// A file changed, moved or expired is refused, never served as other bytes; a file only
        /// touched (same bytes) is hashed again and served.
        @Test func changedMissingAndExpiredFilesAreRefused() async throws {
            let work = try TemporaryDirectory()
            let (ada, grace, _) = try await Self.pair("Ada", "Grace", in: work, extra: ["--grant-ttl", "4s"])
            let names = ["changed.txt", "moved.txt", "touched.txt", "kept.txt"]
            for name in names {
                #expect(FileManager.default.createFile(atPath: work.file(name), contents: Data("\(name) v1\n".utf8)))
            }
            let hex = try await Self.share(names.map(work.file), from: ada, to: grace)
            let changed = try FileHandle(forWritingTo: URL(fileURLWithPath: work.file("changed.txt")))
            try changed.seekToEnd()
            try changed.write(contentsOf: Data("v2\n".utf8))
            try changed.close()
            try FileManager.default.moveItem(atPath: work.file("moved.txt"), toPath: work.file("elsewhere.txt"))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: 3_600)],
                ofItemAtPath: work.file("touched.txt"))

            let first = try await Self.fetch(hex.id.uuidString, by: grace)
            #expect(first.status == 77, "\(first.errors)")
            let ends = first.reports.filter { $0.state != .fetching }
            let byLink = Dictionary(ends.map { ($0.link, $0) }, uniquingKeysWith: { $1 })
            #expect(
                byLink[1]?.state == .failed && byLink[1]?.message?.contains("changed") == true,
                "\(byLink[1].debugDescription)")
            #expect(byLink[2]?.state == .failed && byLink[2]?.message?.contains("moved or deleted") == true)
            #expect(byLink[3]?.state == .fetched && byLink[4]?.state == .fetched)
            let touched = try String(contentsOfFile: work.file("Grace-downloads/touched.txt"), encoding: .utf8)
            #expect(touched == "touched.txt v1\n")
            #expect(!FileManager.default.fileExists(atPath: work.file("Grace-downloads/changed.txt")))

            try await Task.sleep(for: .seconds(4))
            let late = try await Self.fetch(hex.id.uuidString, ["4"], by: grace)
            #expect(late.status == 77 && late.errors.contains("expired"), "\(late.errors)")
        }

        /// A block holds for Fetch as for Stores and Alerts: a key its owner blocked gets nothing,
        /// not even a file shared with it before, until it is unblocked.
        @Test func aBlockedPeerCannotFetchWhatWasSharedWithIt() async throws {
            let work = try TemporaryDirectory()
            let (ada, grace, _) = try await Self.pair("Ada", "Grace", in: work)
            #expect(FileManager.default.createFile(atPath: work.file("notes.txt"), contents: Data("notes\n".utf8)))
            let hex = try await Self.share([work.file("notes.txt")], from: ada, to: grace)
            #expect(try await ada.hexctl(["block", "Grace"]).status == 0)
            let refused = try await Self.fetch(hex.id.uuidString, by: grace)
            #expect(refused.status == 77 && refused.errors.contains("Ada blocked you."), "\(refused.errors)")
            #expect(!FileManager.default.fileExists(atPath: work.file("Grace-downloads/notes.txt")))
            #expect(try await ada.hexctl(["unblock", "Grace"]).status == 0)
            let fetched = try await Self.fetch(hex.id.uuidString, by: grace)
            #expect(fetched.status == 0, "\(fetched.errors)")
            let notes = try String(contentsOfFile: work.file("Grace-downloads/notes.txt"), encoding: .utf8)
            #expect(notes == "notes\n")
        }

        /// The fetching daemon killed (-9) mid-file, then the serving one: each time the fetch
        /// goes on from the partial file, and the bytes sent again are a fraction of the file.
        @Test func aFetchResumesAfterEitherSideIsKilled() async throws {
            let work = try TemporaryDirectory()
            // A pace the test can stop at: 128 MiB take two seconds.
            let (ada, firstGrace, port) = try await Self.pair(
                "Ada", "Grace", in: work,
                extra: ["--max-send-rate", "64MiB"])
            let original = work.file("disk.img")
            try await Self.randomFile(original, mebibytes: 128)
            let hex = try await Self.share([original], from: ada, to: firstGrace)
            let folder = work.file("Grace-downloads")
            let total = 128 * Self.mebibyte

            let interrupted = Task { try await Self.fetch(hex.id.uuidString, by: firstGrace) }
            try await waitUntil("a third of the file arrived", timeout: .seconds(30)) {
                (Self.partial(in: folder)?.size ?? 0) >= total / 3
            }
            firstGrace.kill()
            #expect(try await interrupted.value.status != 0)
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port, directory: firstGrace.directory,
                extraArguments: ["--downloads", folder])
            try await waitUntil("Grace lists Ada", timeout: .seconds(10)) {
                try await grace.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Ada" }
            }
            let resumed = Task { try await Self.fetch(hex.id.uuidString, by: grace) }
            try await waitUntil("two thirds of the file arrived", timeout: .seconds(30)) {
                (Self.partial(in: folder)?.size ?? 0) >= 2 * total / 3
            }
            ada.kill()
            let cut = try await resumed.value
            #expect(cut.status == 75, "the owner gone is worth trying again: \(cut.errors)")
            let firstResume = try #require(cut.reports.first { $0.resumedFrom != nil }?.resumedFrom)
            #expect(firstResume >= Int64(total / 3), "the first resume went on from the partial file")
            let held = try #require(Self.partial(in: folder)).size
            #expect(cut.reports.last?.path == Self.partial(in: folder)?.path, "the partial file is named as kept")

            let owner = try await DaemonProcess(name: "Ada", discoveryPort: port, directory: ada.directory)
            var final: (status: Int32, reports: [FetchReport], errors: String)?
            try await waitUntil("Grace fetches from Ada restarted", timeout: .seconds(30)) {
                let attempt = try await Self.fetch(hex.id.uuidString, by: grace)
                final = attempt
                return attempt.status == 0
            }
            let report = try #require(final?.reports.last)
            let from = try #require(report.resumedFrom)
            #expect(from == Int64(held) && from >= Int64(2 * total / 3))
            #expect(Int64(total) - from <= Int64(total / 3), "sent again: \(Int64(total) - from) bytes of \(total)")
            #expect(try await Self.sha256(folder + "/disk.img") == (try await Self.sha256(original)))
            withExtendedLifetime(owner) {}
        }

        /// Names from a hex (a peer's word) land inside the folder, made safe, or are refused.
        @Test func hostileNamesLandInsideTheFolderWithSafeNames() async throws {
            let work = try TemporaryDirectory()
            let (ada, grace, _) = try await Self.pair("Ada", "Grace", in: work)
            #expect(FileManager.default.createFile(atPath: work.file("note.txt"), contents: Data("hello\n".utf8)))
            let shared = try await Self.share([work.file("note.txt")], from: ada, to: grace)
            let sharedLink = try #require(shared.links.first)
            let link = try #require(PeerFileLink(sharedLink.url))
            let hostile = [
                "../../.bashrc", "/etc/passwd", ".hidden", "CON", "in\u{202E}fdp.exe",
                String(repeating: "x", count: 10_000),
            ]
            let urls = hostile.map { PeerFileLink(ownerID: link.ownerID, grant: link.grant, name: $0).text }
            let sent = try await ada.hexctl(["send", "--to", "Grace", "-d", "names"] + urls)
            #expect(sent.status == 0, "\(sent.standardError)")
            let hex = try #require(try await grace.newestInboxHex())
            let folder = work.file("deep/down/downloads")
            let passwd = try Data(contentsOf: URL(fileURLWithPath: "/etc/passwd"))

            let every = (1...hostile.count).map(String.init)
            let fetched = try await Self.fetch(hex.id.uuidString, every + ["--downloads", folder], by: grace)
            #expect(fetched.status == 77, "the 10,000-character name is refused: \(fetched.errors)")
            let landed = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
            #expect(landed == ["bashrc", "passwd", "hidden", "_CON", "infdp.exe"], "\(landed)")
            for name in landed {
                #expect(try String(contentsOfFile: folder + "/" + name, encoding: .utf8) == "hello\n")
            }
            #expect(!FileManager.default.fileExists(atPath: work.file("deep/.bashrc")))
            #expect(try Data(contentsOf: URL(fileURLWithPath: "/etc/passwd")) == passwd)
            #expect(fetched.reports.last { $0.link == 6 }?.message?.contains("not a hexd:// link") == true)

            // A name taken gets a number; nothing is overwritten.
            let again = try await Self.fetch(hex.id.uuidString, ["1", "--downloads", folder], by: grace)
            #expect(again.status == 0 && again.reports.last?.path == folder + "/bashrc (1)", "\(again)")
        }

        /// A downloads disk that reaches the free-space floor stops the fetch cleanly, keeping the
        /// partial file; with room again, the fetch resumes from it.
        @Test func aFullDownloadsDiskKeepsThePartialFileAndResumes() async throws {
            let disk = try SmallDisk(mebibytes: 64)
            let work = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--min-free", "4MiB"])
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            let original = work.file("archive.tar")
            try await Self.randomFile(original, mebibytes: 40)
            let hex = try await Self.share([original], from: ada, to: grace)
            let filler = disk.file("filler")
            try await Self.randomFile(filler, mebibytes: 38)

            let full = try await Self.fetch(hex.id.uuidString, ["--downloads", disk.path], by: grace)
            #expect(full.status == 75, "\(full.errors)")
            #expect(full.errors.contains("kept") && full.errors.contains("fetch again to resume"), "\(full.errors)")
            let kept = try #require(Self.partial(in: disk.path))
            #expect(kept.size > 0 && kept.size < 40 * Self.mebibyte, "\(kept)")

            try FileManager.default.removeItem(atPath: filler)
            let resumed = try await Self.fetch(hex.id.uuidString, ["--downloads", disk.path], by: grace)
            #expect(resumed.status == 0, "\(resumed.errors)")
            #expect(resumed.reports.last?.resumedFrom == Int64(kept.size))
            #expect(try await Self.sha256(disk.file("archive.tar")) == (try await Self.sha256(original)))
        }

        /// On exFAT (no hard links) a file still takes its name only whole, and never another's.
        @Test func aFileLandsWholeOnADiskWithoutHardLinks() async throws {
            let work = try TemporaryDirectory()
            let disk = try await LoopDisk(image: work.file("exfat.img"), formatting: 32, as: .exfat)
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            // A floor a 32 MiB disk can keep.
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--min-free", "1MiB"])
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            try await Self.randomFile(work.file("scan.pdf"), mebibytes: 4)
            let hex = try await Self.share([work.file("scan.pdf")], from: ada, to: grace)
            for expected in ["scan.pdf", "scan (1).pdf"] {
                let fetched = try await Self.fetch(hex.id.uuidString, ["--downloads", disk.path], by: grace)
                #expect(fetched.status == 0 && fetched.reports.last?.path == disk.file(expected), "\(fetched)")
                #expect(try await Self.sha256(disk.file(expected)) == (try await Self.sha256(work.file("scan.pdf"))))
            }
            #expect(
                Set(try FileManager.default.contentsOfDirectory(atPath: disk.path)) == ["scan.pdf", "scan (1).pdf"])
        }

        /// `--auto-fetch paired`: a paired peer's files land without asking; a stranger's wait.
        @Test func filesOfAPairedPeerAreFetchedAtOnce() async throws {
            let work = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let folder = work.file("downloads")
            let grace = try await DaemonProcess(
                name: "Grace", discoveryPort: port,
                extraArguments: ["--auto-fetch", "paired", "--downloads", folder])
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let bob = try await DaemonProcess(name: "Bob", discoveryPort: port)
            for sender in [ada, bob] {
                try await waitUntil("\(sender.name) lists Grace", timeout: .seconds(10)) {
                    try await sender.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
                }
            }
            #expect(try await ada.hexctlJSON(TrustReport.self, ["pair", "grace"]).code != nil)
            #expect(try await grace.hexctlJSON(TrustReport.self, ["pair", "--accept", "ada"]).trust == .paired)
            for name in ["from-bob.txt", "from-ada.txt"] {
                #expect(FileManager.default.createFile(atPath: work.file(name), contents: Data(name.utf8)))
            }
            // Bob's hex comes first: by the time Ada's file has landed, Bob's was passed over.
            _ = try await Self.share([work.file("from-bob.txt")], from: bob, to: grace)
            _ = try await Self.share([work.file("from-ada.txt")], from: ada, to: grace)
            try await waitUntil("Ada's file lands by itself", timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: folder + "/from-ada.txt")
            }
            #expect(try String(contentsOfFile: folder + "/from-ada.txt", encoding: .utf8) == "from-ada.txt")
            #expect(!FileManager.default.fileExists(atPath: folder + "/from-bob.txt"), "a stranger's file waits")
            let events = try await grace.events { $0.contains { $0.kind == .fileFetched } }
            #expect(events.first { $0.kind == .fileFetched }?.message == folder + "/from-ada.txt")
        }

        /// A legacy peer cannot fetch from this daemon: a share to it must say how links are made.
        @Test func aShareToALegacyPeerNamesTheProvider() async throws {
            let work = try TemporaryDirectory()
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let old = try await DaemonProcess(name: "Old", discoveryPort: port, extraArguments: ["--legacy"])
            try await waitUntil("Ada lists Old", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Old" }
            }
            #expect(FileManager.default.createFile(atPath: work.file("a.txt"), contents: Data("a".utf8)))
            let refused = try await ada.hexctl(["share", "--to", "Old", work.file("a.txt")])
            #expect(refused.status == 64 && refused.standardError.contains("--provider"), "\(refused.standardError)")
            #expect(try await ada.hexctlJSONLines(FileGrant.self, ["grants"]).isEmpty)
            let asFile = try await ada.hexctl([
                "share", "--to", "Old", "--provider", "file", "--no-wait",
                work.file("a.txt"),
            ])
            #expect(asFile.status == 0, "\(asFile.standardError)")
            try await waitUntil("Old has the file:// link", timeout: .seconds(10)) {
                try await old.newestInboxHex()?.links.first?.url == "file://" + work.file("a.txt")
            }
            withExtendedLifetime(old) {}
        }
    }
}
