import Foundation
import HexHarness
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexdCommandTests {
        @Test func aStoppedDaemonKeepsItsIdentityAndRemovesItsControlSocket() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let daemon = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let first = try await daemon.hexctlJSON(StatusReportShape.self, ["status"])
            #expect(first.name == "Ada")
            #expect(FileManager.default.fileExists(atPath: daemon.dataDirectory + "/hexd.sqlite"))
            #expect(daemon.stop() == 0, "SIGTERM is a clean stop")
            #expect(!FileManager.default.fileExists(atPath: daemon.dataDirectory + "/hexd.sock"))
            #expect(daemon.log.contains("SIGTERM: stopping") && daemon.log.contains("stopped"))
            #expect(try await daemon.hexctl(["status"]).status == 69, "no daemon: exit 69")
        }

        /// Two fresh installs are not both "hexd user": a first start without --name takes the host
        /// name (without its domain), and a name given later is kept over it.
        @Test func aFirstStartWithoutANameTakesTheHostName() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let kernel = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
            let host = try #require(kernel.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").first)
            let fresh = try await DaemonProcess(name: "fresh", discoveryPort: port, passingName: false)
            #expect(try await fresh.hexctlJSON(StatusReportShape.self, ["status"]).name == String(host))
            #expect(fresh.stop() == 0)
            let named = try await DaemonProcess(name: "Ada", discoveryPort: port, directory: fresh.directory)
            #expect(named.stop() == 0)
            let again = try await DaemonProcess(
                name: "unnamed", discoveryPort: port, directory: fresh.directory,
                passingName: false)
            let kept = try await again.hexctlJSON(StatusReportShape.self, ["status"]).name
            #expect(kept == "Ada", "a given name is kept")
        }

        /// A first start killed (-9) at any moment, its identity half made or not at all, leaves a
        /// data directory the next start serves from, with one identity from then on.
        @Test func aFirstStartKilledAtAnyMomentLeavesADaemonThatStarts() async throws {
            let hexd = PackageExecutable.binDirectory + "/hexd"
            for delay in stride(from: 0, to: 60, by: 4) {
                let directory = try TemporaryDirectory()
                let data = directory.file("data")
                let first = try SpawnedProcess(
                    hexd,
                    [
                        "--data-dir", data, "--port", "0", "--discovery-port", "0",
                        "--broadcast", "127.255.255.255", "--localsend", "off", "--kdeconnect", "off",
                    ])
                try await Task.sleep(for: .milliseconds(delay))
                first.send(SIGKILL)
                first.waitBlocking()
                let port = try DaemonProcess.freeDiscoveryPort()
                let daemon = try await DaemonProcess(name: "again", discoveryPort: port, directory: directory)
                let status = try await daemon.hexctlJSON(StatusReportShape.self, ["status"])
                #expect(status.peerUUID.isKeyDerivedID, "killed after \(delay) ms: \(status.peerUUID)")
            }
        }

        @Test func aSecondDaemonOnTheSameDataDirectoryRefusesToStart() async throws {
            let daemon = try await DaemonProcess(name: "First", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let second = try await PackageExecutable.run(
                "hexd", ["--data-dir", daemon.dataDirectory, "--port", "0", "--discovery-port", "0"],
                timeout: .seconds(20))
            #expect(second.status == 1)
            #expect(
                second.standardError.contains("another hexd (pid \(daemon.pid)) is running with the data directory"))
            #expect(try await daemon.hexctl(["status"]).status == 0, "the first one keeps serving")
        }

        @Test func aPortInUseIsAClearError() async throws {
            let daemon = try await DaemonProcess(name: "Holder", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let other = try TemporaryDirectory()
            let result = try await PackageExecutable.run(
                "hexd", ["--data-dir", other.path, "--port", String(port), "--discovery-port", "0"],
                timeout: .seconds(20))
            #expect(
                result.status == 1
                    && result.standardError.contains("cannot bind 0.0.0.0:\(port): Address already in use"))
        }

        @Test func theDaemonsFilesAreItsUsersAlone() async throws {
            let daemon = try await DaemonProcess(name: "Private", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            for name in ["", "/hexd.sqlite", "/hexd.sqlite-wal", "/hexd.sqlite-shm", "/hexd.lock", "/hexd.sock"] {
                let mode =
                    try FileManager.default.attributesOfItem(atPath: daemon.dataDirectory + name)[.posixPermissions]
                    as? Int
                #expect(mode == (name.isEmpty ? 0o700 : 0o600), "\(name): \(String(mode ?? 0, radix: 8))")
            }
        }

        @Test func hexdRefusesADamagedDatabaseWithAHint() async throws {
            let directory = try TemporaryDirectory()
            try Receiver.damageDatabase(at: directory.file("hexd.sqlite"))
            let result = try await PackageExecutable.run(
                "hexd", ["--data-dir", directory.path, "--port", "0", "--discovery-port", "0"], timeout: .seconds(20))
            #expect(result.status == 1)
            #expect(
                result.standardError.contains("is damaged") && result.standardError.contains(".recover"),
                "\(result.standardError)")
        }

        @Test(arguments: ["logfmt", "json"])
        func logsAreRecordsWithMillisecondTimes(_ format: String) async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: port, extraArguments: ["--log-format", format])
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            #expect(try await ada.hexctl(["send", "--to", "Grace", "https://example.com"]).status == 0)
            ada.stop()
            let lines = ada.log.split(separator: "\n").map(String.init)
            #expect(lines.count >= 3)
            for line in lines {
                if format == "json" {
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
                    #expect(
                        object?["ts"]?.contains(".") == true && object?["level"] != nil && object?["component"] != nil
                            && object?["msg"] != nil, "\(line)")
                } else {
                    #expect(
                        line.hasPrefix("ts=") && line.contains(" level=") && line.contains(" component=")
                            && line.contains(" msg="), "\(line)")
                }
            }
            #expect(
                lines.contains { $0.contains("Store to Grace") && $0.contains("stored") },
                "the sending side logs its sends")
            withExtendedLifetime(grace) {}
        }

        @Test func hexdRefusesADatabaseFromANewerVersion() async throws {
            let directory = try TemporaryDirectory()
            try Receiver.setUserVersion(99, path: try Receiver.makeDatabase(in: directory.path))
            let result = try await PackageExecutable.run(
                "hexd", ["--data-dir", directory.path, "--port", "0", "--discovery-port", "0"], timeout: .seconds(20))
            #expect(result.status == 1)
            #expect(result.standardError.contains("schema version 99"))
        }

        @Test(arguments: [
            ["--bogus"], ["--name"], ["--port", "70000"], ["--announce-interval", "0"], ["--broadcast", "nowhere"],
            ["extra"],
        ])
        func hexdRejectsABadCommandLineWithUsage(_ arguments: [String]) async throws {
            let result = try await PackageExecutable.run("hexd", arguments)
            #expect(result.status == 64)
            #expect(result.standardError.hasPrefix("hexd: ") && result.standardError.contains("see hexd --help"))
        }

        /// hexd links FoundationEssentials, never the whole of Foundation: that one brings ICU
        /// with it, 6 to 8 MiB more resident in every daemon (`hexbench delivery`'s RSS figures),
        /// and tens of megabytes more in a static build. One `import Foundation` anywhere in the
        /// daemon's modules did exactly that once.
        @Test func hexdDoesNotLinkTheWholeOfFoundation() async throws {
            let linked = try await PackageExecutable.run(
                "/usr/bin/ldd", [PackageExecutable.binDirectory + "/hexd"], timeout: .seconds(30))
            #expect(linked.status == 0, "\(linked.standardError)")
            #expect(linked.standardOutput.contains("libFoundationEssentials"), "\(linked.standardOutput)")
            #expect(!linked.standardOutput.contains("libFoundation.so"), "\(linked.standardOutput)")
            #expect(!linked.standardOutput.contains("FoundationICU"), "\(linked.standardOutput)")
        }

        @Test func hexdHelpListsEveryOptionAndVersion() async throws {
            let help = try await PackageExecutable.run("hexd", ["--help"])
            #expect(help.status == 0 && help.standardOutput.contains("USAGE: hexd"))
            for option in [
                "--data-dir", "--config", "--name", "--port", "--discovery-port", "--broadcast", "--peer",
                "--announce-interval",
                "--app-version", "--legacy", "--log-level", "--max-line", "--idle-timeout", "--link-command",
                "--link-service",
                "--link-concurrency", "--link-timeout", "--grant-ttl", "--downloads", "--max-send-rate",
                "EXIT CODES",
            ] {
                #expect(help.standardOutput.contains(option), "\(option)")
            }
            #expect(try await PackageExecutable.run("hexd", ["--version"]).standardOutput == HexdVersion.current + "\n")
        }
    }
}

/// The fields of `hexctl status --json` the tests read.
struct StatusReportShape: Decodable {
    let name: String
    let peerUUID: String
    let tcpPort: UInt16
    let peers: Int
    let inbox: Int
    let unchecked: Int
    let datagramsMalformed: Int
    let datagramsOversized: Int
}
