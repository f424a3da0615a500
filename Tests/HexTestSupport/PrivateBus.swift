import Foundation
import Glibc
import HexHarness

/// A private session bus for a test: Debian's `dbus-daemon --session`, listening on a socket in a
/// temporary directory, stopped when the value goes away (or by `stop`).
public final class PrivateBus: @unchecked Sendable {
    public let directory: TemporaryDirectory
    /// For `DBUS_SESSION_BUS_ADDRESS`.
    public let address: String
    private let process: SpawnedProcess

    /// - Parameter daemon: the path of `dbus-daemon` (`ExternalTool.require("dbus-daemon")`).
    public init(daemon: String) async throws {
        directory = try TemporaryDirectory()
        let socket = directory.file("bus")
        address = "unix:path=" + socket
        process = try SpawnedProcess(daemon, ["--session", "--nofork", "--nopidfile", "--address=" + address])
        try await waitUntil("dbus-daemon listens at \(socket)", timeout: .seconds(10)) {
            FileManager.default.fileExists(atPath: socket)
        }
    }

    /// Stops the bus, as a desktop session's end or a crash would.
    public func stop() {
        process.send(SIGKILL)
        _ = process.waitBlocking()
    }

    deinit {
        process.send(SIGKILL)
        _ = process.waitBlocking()
    }
}
