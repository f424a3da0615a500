import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// `hexd --on-receive`: a command run for each hex stored, given the hex as data only.
    @Suite struct ReceiveHookTests {
        private static func script(
            _ body: String, in directory: TemporaryDirectory, named name: String
        ) throws -> String {
            let path = directory.file(name)
            try ("#!/bin/sh\n" + body).write(toFile: path, atomically: true, encoding: .utf8)
            #expect(chmod(path, 0o700) == 0)
            return path
        }

        /// The command lines of the processes whose command line contains `text`.
        private static func processes(running text: String) -> [String] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
                guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
                let line = String(decoding: bytes.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
                return line.contains(text) ? line : nil
            }
        }

        private static func store(from sender: String, name: String, _ description: String) -> Envelope {
            .store(
                HexJM(
                    senderUUID: sender, senderName: name, hexDescription: description, hexColor: "#FF0000",
                    links: [LinkJM(url: "https://hook.example/$(id)")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
        }

        /// The command gets the hex as JSON on standard input and its sender in the environment;
        /// shell syntax in what a peer sent stays text: no marker file is made.
        @Test func theCommandGetsEachHexAsDataAndNothingAPeerSentIsRunByAShell() async throws {
            let work = try TemporaryDirectory()
            let out = work.file("out")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            let marker = work.file("marker")
            let hook = try Self.script(
                """
                cat > "$1/$HEX_ID.json"
                printf '%s\\n%s\\n%s\\n' "$HEX_SENDER_ID" "$HEX_SENDER_NAME" "$HEX_TRUST" > "$1/$HEX_ID.env"
                """, in: work, named: "hook.sh")
            // What a daemon killed while its command ran left in the spool goes at the next start.
            let home = try TemporaryDirectory()
            let stale = home.file("data/on-receive/stale.json")
            try FileManager.default.createDirectory(
                atPath: home.file("data/on-receive"),
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            #expect(FileManager.default.createFile(atPath: stale, contents: Data("{}".utf8)))
            #expect(chmod(home.file("data"), 0o700) == 0)
            let daemon = try await DaemonProcess(
                name: "Hooked", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                directory: home, extraArguments: ["--on-receive", "\(hook) \(out)"])
            let port = try await daemon.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let sender = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
            let injected = "$(touch \(marker)) `touch \(marker)`; touch \(marker)"
            let answers = try await exchange([Self.store(from: sender, name: injected, injected)], port: port, as: nil)
            let id = try #require(answers.first?.hexID)
            do {
                try await waitUntil("the command wrote its files", timeout: .seconds(10)) {
                    FileManager.default.fileExists(atPath: out + "/\(id).env")
                }
            } catch {
                Issue.record("\(error); hexd's log:\n\(daemon.log)")
                throw error
            }
            let json = try #require(FileManager.default.contents(atPath: out + "/\(id).json"))
            let hex = try ControlCoding.decode(Hex.self, from: Array(json))
            #expect(hex.id.uppercaseText == id && hex.hexDescription == injected && hex.senderName == injected)
            #expect(hex.links.map(\.url) == ["https://hook.example/$(id)"])
            let environment = try String(contentsOfFile: out + "/\(id).env", encoding: .utf8)
            #expect(environment == "\(sender)\n\(injected)\nplaintext\n")
            #expect(!FileManager.default.fileExists(atPath: marker), "nothing a peer sent went through a shell")
            try await waitUntil("the command's end is logged", timeout: .seconds(5)) {
                daemon.log.contains("on-receive: hex \(id): done")
            }
            let spool =
                (try? FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory + "/on-receive"))
                ?? []
            #expect(spool.isEmpty, "the command's input is removed once it ended: \(spool)")
        }

        /// A command past its timeout is stopped with its children, and the log says so.
        @Test func aCommandPastItsTimeoutIsStoppedWithItsChildren() async throws {
            let work = try TemporaryDirectory()
            let hook = try Self.script("sleep 61.25 &\nsleep 61.25\n", in: work, named: "slow.sh")
            let daemon = try await DaemonProcess(
                name: "Slow", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--on-receive", hook, "--on-receive-timeout", "1"])
            let port = try await daemon.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let answers = try await exchange(
                [Self.store(from: UUID().uuidString, name: "Slow", "slow")], port: port,
                as: nil)
            let id = try #require(answers.first?.hexID)
            try await waitUntil("the stop is logged", timeout: .seconds(10)) {
                daemon.log.contains("on-receive: hex \(id): stopped after 1.0 seconds")
            }
            #expect(Self.processes(running: "sleep 61.25").isEmpty, "both sleeps were stopped")
        }
    }
}
