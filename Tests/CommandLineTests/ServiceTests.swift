import Foundation
import Glibc
import HexHarness
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// hexd as a systemd service: the units verify, the system unit stays hardened, and the daemon
    /// tells the service manager when it is ready (Type=notify).
    @Suite struct ServiceTests {
        static let examples = #filePath.split(separator: "/").dropLast(3).map { "/" + $0 }.joined() + "/Examples"

        /// A unit file with its ExecStart pointed at the hexd just built (verify checks it exists).
        private func unit(_ name: String, in directory: TemporaryDirectory, home: String? = nil) throws -> String {
            var text = try String(contentsOfFile: "\(Self.examples)/\(name)", encoding: .utf8)
            text = text.replacingOccurrences(of: "/usr/local/bin/hexd", with: PackageExecutable.binDirectory + "/hexd")
            let path = directory.file(name == "hexd-user.service" ? "hexd.service" : name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            if let home {
                try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
                try? FileManager.default.removeItem(atPath: home + "/.local/bin/hexd")
                try FileManager.default.createSymbolicLink(
                    atPath: home + "/.local/bin/hexd", withDestinationPath: PackageExecutable.binDirectory + "/hexd")
            }
            return path
        }

        @Test func theSystemUnitVerifiesAndIsHardened() async throws {
            let analyzer = try ExternalTool.require("systemd-analyze")
            let directory = try TemporaryDirectory()
            let path = try unit("hexd.service", in: directory)
            let verify = try await PackageExecutable.run(analyzer, ["verify", path])
            #expect(verify.status == 0 && verify.standardError.isEmpty, "\(verify.standardError)")
            let security = try await PackageExecutable.run(analyzer, ["security", "--offline=true", path])
            let line =
                security.standardOutput.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
            let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
            #expect(score.map { $0 <= 3.0 } == true, "exposure: \(line)")
        }

        @Test func theUserUnitVerifies() async throws {
            let analyzer = try ExternalTool.require("systemd-analyze")
            let directory = try TemporaryDirectory()
            let home = directory.file("home")
            let runtime = directory.file("run")
            try FileManager.default.createDirectory(
                atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let path = try unit("hexd-user.service", in: directory, home: home)
            let verify = try await PackageExecutable.run(
                analyzer, ["--user", "verify", path],
                environment: ["HOME": home, "XDG_RUNTIME_DIR": runtime])
            #expect(verify.status == 0 && verify.standardError.isEmpty, "\(verify.standardError)")
        }

        @Test func theDaemonTellsTheServiceManagerWhenItIsReady() async throws {
            let directory = try TemporaryDirectory()
            let path = directory.file("notify.sock")
            let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            #expect(bound == 0)
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let daemon = try await DaemonProcess(
                name: "Notified", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                environment: ["NOTIFY_SOCKET": path])
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(listener, &buffer, buffer.count, 0)
            #expect(count > 0 && String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("READY=1"))
            daemon.stop()
            let stopping = recv(listener, &buffer, buffer.count, 0)
            #expect(stopping > 0 && String(decoding: buffer.prefix(max(stopping, 0)), as: UTF8.self) == "STOPPING=1")
        }
    }
}
