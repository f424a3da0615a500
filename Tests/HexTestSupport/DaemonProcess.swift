// Full Foundation for UUID, ProcessInfo and file reads; processes start through SpawnedProcess.
import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet

/// A real `hexd` process for a test: its own data directory, TCP port chosen by the system,
/// discovery on a port shared with the test's other daemons, beacons to 127.255.255.255.
public final class DaemonProcess: @unchecked Sendable {
    public let name: String
    public let directory: TemporaryDirectory
    private let process: SpawnedProcess
    private let logPath: String

    /// A UDP port free right now, for the discovery port of one test's daemons.
    public static func freeDiscoveryPort() throws -> UInt16 {
        try DatagramSocket(address: .loopback, port: 0).port
    }

    /// Starts `hexd` and returns once its control socket answers `status`.
    /// - Parameter directory: an earlier daemon's directory, to restart it; a new one by default.
    /// - Parameters:
    ///   - descriptorLimit: started under `ulimit -n` of this (soft and hard), when given.
    ///   - environment: variables added to the test's environment.
    ///   - passingName: whether `--name name` is given (else `name` only labels it in the test).
    public init(
        name: String, discoveryPort: UInt16, interval: Double = 0.3, directory: TemporaryDirectory? = nil,
        extraArguments: [String] = [],
        descriptorLimit: Int? = nil, environment: [String: String] = [:], passingName: Bool = true
    ) async throws {
        self.name = name
        self.directory = try directory ?? TemporaryDirectory()
        logPath = self.directory.file("hexd-\(UUID().uuidString.prefix(8)).log")
        let hexd = PackageExecutable.binDirectory + "/hexd"
        var arguments =
            [
                "--data-dir", self.directory.file("data"), "--port", "0", "--discovery-port", String(discoveryPort),
                "--broadcast", "127.255.255.255", "--announce-interval", String(interval),
            ] + (passingName ? ["--name", name] : [])
            + (extraArguments.contains("--log-level") ? [] : ["--log-level", "debug"])
            // Tests that want the page ask for it, on a port of their own.
            + (extraArguments.contains("--web") ? [] : ["--web", "off"])
            + (extraArguments.contains("--notify") ? [] : ["--notify", "off"])
            // Tests of LocalSend ask for it, on a port of their own; KDE Connect is tested in namespaces.
            + (extraArguments.contains("--localsend") ? [] : ["--localsend", "off"])
            + (extraArguments.contains("--kdeconnect") ? [] : ["--kdeconnect", "off"]) + extraArguments
        var program = hexd
        if let descriptorLimit {
            // The shell sets the limit and becomes hexd (exec), so the process is still hexd's.
            program = "/bin/sh"
            arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", hexd] + arguments
        }
        let logFile = Glibc.open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard logFile >= 0 else { throw SpawnError(path: logPath, reason: String(cString: strerror(errno))) }
        defer { close(logFile) }  // the daemon has its copy
        // No test daemon reaches the machine's system bus: not its Avahi, and not its BlueZ, which would
        // broadcast a Bluetooth LE advertisement for a Quick Share send that waits.
        let bus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + self.directory.file("no-system-bus")]
        process = try SpawnedProcess(
            program, arguments, environment: bus.merging(environment) { $1 }, standardError: logFile)
        let process = process
        try await waitUntil("\(name) answers status", timeout: .seconds(20)) { [self] in
            guard process.isRunning else { throw DaemonExited(name: name, log: log) }
            return try await hexctl(["status"]).status == 0
        }
    }

    deinit {
        if process.isRunning { stop() }
    }

    public var dataDirectory: String { directory.file("data") }
    public var pid: Int32 { process.pid }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Runs `hexctl` against this daemon.
    public func hexctl(_ arguments: [String], input: Data = Data(), timeout: Duration = .seconds(30)) async throws
        -> ProcessResult
    {
        try await PackageExecutable.run(
            "hexctl", arguments, input: input, environment: ["HEXD_DATA_DIR": dataDirectory], timeout: timeout)
    }

    /// `hexctl <arguments> --json`, decoded.
    public func hexctlJSON<T: Decodable>(_ type: T.Type, _ arguments: [String]) async throws -> T {
        let result = try await hexctl(arguments + ["--json"])
        guard result.status == 0 else {
            throw DaemonExited(
                name: name, log: "hexctl \(arguments) failed (\(result.status)): \(result.standardError)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(result.standardOutput.utf8))
    }

    /// Runs hexctl with `--json` on a list command: one object per line.
    public func hexctlJSONLines<T: Decodable>(_ type: T.Type, _ arguments: [String]) async throws -> [T] {
        let result = try await hexctl(arguments + ["--json"])
        guard result.status == 0 else {
            throw DaemonExited(
                name: name, log: "hexctl \(arguments) failed (\(result.status)): \(result.standardError)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try result.standardOutput.split(separator: "\n").map { try decoder.decode(type, from: Data($0.utf8)) }
    }

    /// The newest hex of the inbox, whole (with its links), as `hexctl inbox show --full` gives it.
    public func newestInboxHex() async throws -> Hex? {
        guard let newest = try await hexctlJSONLines(HexSummary.self, ["inbox", "--limit", "1"]).first else {
            return nil
        }
        return try await hexctlJSON(Hex.self, ["inbox", "show", "--full", newest.id.uuidString])
    }

    /// Reads the daemon's events with `watch` (from after `since`: the retained ones first, then
    /// new ones as they happen) until `done` holds for the events read so far, and returns them.
    /// - Throws: `WaitTimedOut`, naming the events seen, when `done` does not hold by `timeout`.
    public func events(
        since: UInt64 = 0, timeout: Duration = .seconds(20), until done: ([DaemonEvent]) -> Bool
    ) async throws -> [DaemonEvent] {
        let deadline = ContinuousClock.now + timeout
        let client = try ControlClient(socketPath: dataDirectory + "/hexd.sock")
        var events: [DaemonEvent] = []
        var response = try await client.request(.watch(since: since), timeout: timeout)
        while true {
            if let error = response.error { throw error }
            if let event = response.event { events.append(event) }
            if done(events) { return events }
            let left = deadline - ContinuousClock.now
            do {
                guard left > .zero else { throw SocketError.timedOut("read an event") }
                response = try await client.nextResponse(timeout: left)
            } catch let error as SocketError where error.isTimeout {
                let seen = events.map { "\($0.seq) \($0.kind.rawValue) \($0.peer ?? "") \($0.message ?? "")" }
                throw WaitTimedOut(what: "\(name)'s events fit; seen:\n" + seen.joined(separator: "\n"))
            }
        }
    }

    /// Stops with SIGTERM (a clean stop) and returns the exit status; a daemon still running
    /// `stopDeadline` later gets SIGKILL (its status then says so), so that no test waits forever.
    @discardableResult
    public func stop() -> Int32 {
        process.send(SIGTERM)
        let deadline = ContinuousClock.now + Self.stopDeadline
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { process.send(SIGKILL) }
        return process.waitBlocking()
    }

    /// How long a clean stop may take: the goodbyes and the store's last commit.
    public static let stopDeadline: Duration = .seconds(20)

    /// Ends the process with SIGKILL: no goodbye, like a machine that vanishes.
    public func kill() {
        process.send(SIGKILL)
        process.waitBlocking()
    }

    public var isRunning: Bool { process.isRunning }

    /// Runs `body`; should it throw, the error is thrown again with what explains it: whether the
    /// daemon still runs (or how it ended) and the end of its log.
    @discardableResult
    public func explaining<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            let state = process.exitStatus.map { "ended with status \($0)" } ?? "still running"
            throw DaemonExited(name: name, log: "\(error); hexd \(state); its log ends:\n\(log.suffix(8_000))")
        }
    }
}

/// The daemon ended while a test needed it.
public struct DaemonExited: Error, CustomStringConvertible {
    public let name: String
    public let log: String
    public var description: String { "hexd \(name) is not usable; its log:\n\(log)" }
}

/// Polls `condition` every 50 ms until it holds; throws after `timeout` (bounded, never hangs).
public func waitUntil(_ what: String, timeout: Duration, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    // The condition is asked once more after the deadline: a waiter that a loaded machine woke
    // only after it (the whole suite starting at once) must not time out without looking again.
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(50))
    }
}

public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting until \(what)" }
}
