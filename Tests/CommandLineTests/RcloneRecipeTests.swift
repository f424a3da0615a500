import Foundation
import HexHarness
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// `Examples/link-commands/rclone-link`, the cloud-link recipe, driven through a real hexd
    /// with a stand-in `rclone` on the PATH (no network here) that records what it is asked.
    @Suite struct RcloneRecipeTests {
        static let recipe =
            #filePath.split(separator: "/").dropLast(3).map { "/" + $0 }.joined()
            + "/Examples/link-commands/rclone-link"

        /// An `rclone` that logs its arguments, one run per line, prints a Dropbox-like link for
        /// `link`, and refuses to upload a file whose name holds "denied".
        static func standIn(in directory: TemporaryDirectory) throws -> (bin: String, log: String) {
            let bin = directory.file("bin")
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            let log = directory.file("rclone.log")
            let script = """
                #!/bin/sh
                echo "$*" >> \(log)
                case "$1 $2" in
                  "copyto "*denied*) echo "ERROR : permission denied by the remote" >&2; exit 3;;
                  "link "*) echo "https://www.dropbox.com/s/stand-in/$(basename "$2")";;
                esac
                """
            #expect(
                FileManager.default.createFile(
                    atPath: bin + "/rclone", contents: Data(script.utf8),
                    attributes: [.posixPermissions: 0o755]))
            return (bin, log)
        }

        @Test func theRecipeUploadsThenLinksAndAFailureNamesTheFile() async throws {
            let work = try TemporaryDirectory()
            let (bin, log) = try Self.standIn(in: work)
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            let daemon = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: [
                    "--link-command", "\(Self.recipe) dropbox:Shared/hexd/ {path}",
                    "--link-service", "Dropbox",
                ],
                environment: ["PATH": bin + ":" + path])
            let report = work.file("Q3 report.pdf")
            #expect(FileManager.default.createFile(atPath: report, contents: Data("q3".utf8)))

            let hex = try await daemon.hexctlJSON(Hex.self, ["share", "--save", report])
            #expect(hex.links.map(\.url) == ["https://www.dropbox.com/s/stand-in/Q3 report.pdf"])
            #expect(hex.links.first?.service == .dropbox && hex.links.first?.linkDescription == "Q3 report.pdf")
            let runs = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            #expect(
                runs == [
                    "copyto \(report) dropbox:Shared/hexd/Q3 report.pdf",
                    "link dropbox:Shared/hexd/Q3 report.pdf",
                ])

            let denied = work.file("denied.pdf")
            #expect(FileManager.default.createFile(atPath: denied, contents: Data("no".utf8)))
            let failed = try await daemon.hexctl(["share", "--save", denied])
            #expect(failed.status != 0)
            #expect(
                failed.standardError.contains(denied) && failed.standardError.contains("could not upload"),
                "\(failed.standardError)")
        }
    }
}
