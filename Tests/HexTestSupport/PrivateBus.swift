import Foundation
import Glibc
import HexHarness
import HexNet

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
        // dbus-daemon binds (the file appears) before it listens: a connection between the two is
        // refused, so the bus is ready once one is taken (it was seen refused under a loaded suite).
        try await waitUntil("dbus-daemon listens at \(socket)", timeout: .seconds(10)) {
            guard let probe = try? StreamConnector.unix(path: socket) else { return false }
            probe.shutdown()
            return true
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
