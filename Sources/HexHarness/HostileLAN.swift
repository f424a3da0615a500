// Full Foundation for reading /proc: these tools watch real hexd processes.
import Foundation
import HexKit
import HexNet
import Synchronization

/// Attackers for the hostile-network tests and `hexbench hostile`: many TCP connections that
/// hold a daemon's resources, and floods of beacons. Each plays several hosts from loopback
/// addresses (127.x.y.z) and stops when told, or when its task is cancelled.
public final class ConnectionSwarm: Sendable {
    /// What each connection does once connected.
    public enum Behaviour: Sendable {
        /// Says nothing.
        case idle
        /// Sends one byte of an endless line every interval.
        case trickle(every: Duration)
        /// Sends this many bytes of a line without ending it, then says nothing.
        case partialLine(bytes: Int)
    }

    private struct Counts {
        var connected = 0
        var closedByPeer = 0
        var timedOut = 0
        var open = 0
    }

    /// The counts, shared with the attackers' tasks.
    private final class Tally: Sendable {
        let counts = Mutex(Counts())
    }

    private let tally = Tally()
    private let task: Task<Void, Never>

    /// Starts `count` connections to 127.0.0.1:`port`, spread evenly over `sources`. A connection
    /// the daemon closes is opened again after `reconnectDelay` (the pressure stays on).
    public init(
        count: Int, port: UInt16, sources: [String], behaviour: Behaviour, reconnectDelay: Duration = .milliseconds(200)
    ) {
        let tally = tally
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    let source = IPAddress(sources[index % sources.count])
                    group.addTask {
                        while !Task.isCancelled {
                            await Self.hold(port: port, source: source, behaviour: behaviour, tally: tally)
                            try? await Task.sleep(for: reconnectDelay)
                        }
                    }
                }
            }
        }
    }

    /// Connections made so far, and how many of them the daemon closed (an end of stream or a
    /// reset seen by a read or a write).
    public var connected: Int { tally.counts.withLock(\.connected) }
    public var closedByPeer: Int { tally.counts.withLock(\.closedByPeer) }
    /// Connections given up because a write or read of the attacker's own timed out: the daemon
    /// neither took the bytes nor closed the connection.
    public var timedOut: Int { tally.counts.withLock(\.timedOut) }
    /// Connections open now.
    public var open: Int { tally.counts.withLock(\.open) }

    /// Closes every connection and waits for the attackers to stop.
    public func stop() async {
        task.cancel()
        await task.value
    }

    private static func hold(port: UInt16, source: IPAddress?, behaviour: Behaviour, tally: Tally) async {
        guard
            let socket = try? await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5), from: source)
        else { return }
        tally.counts.withLock {
            $0.connected += 1
            $0.open += 1
        }
        defer { tally.counts.withLock { $0.open -= 1 } }
        let connection = StreamConnection(socket: socket, maximumLineLength: 1 << 20)
        do {
            switch behaviour {
            case .idle:
                _ = try await connection.readLine(timeout: nil)
            case .trickle(let interval):
                try await socket.write(Array(#"{"versionID":"2.0.0","x":""#.utf8), timeout: .seconds(1))
                while !Task.isCancelled {
                    try await Task.sleep(for: interval)
                    try await socket.write([UInt8(ascii: "a")], timeout: .seconds(1))
                }
            case .partialLine(let bytes):
                try await socket.write(
                    Array(#"{"versionID":"2.0.0","x":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: bytes),
                    timeout: .seconds(10))
                _ = try await connection.readLine(timeout: nil)
            }
            // The daemon closed it (a read ended), unless this attacker was told to stop.
            if !Task.isCancelled { tally.counts.withLock { $0.closedByPeer += 1 } }
        } catch let error as SocketError where error.isTimeout {
            if !Task.isCancelled { tally.counts.withLock { $0.timedOut += 1 } }
        } catch is CancellationError {
            // Told to stop.
        } catch {
            // A reset or a broken pipe: the daemon closed it.
            if !Task.isCancelled { tally.counts.withLock { $0.closedByPeer += 1 } }
        }
    }
}

/// Floods a discovery port with beacons.
public enum BeaconFlood {
    /// Sends `count` announce beacons, each from a new random peer UUID, round-robin from
    /// `sources`, to 127.0.0.1:`port`, at most `perSecond` a second.
    /// - Parameter interval: the interval the beacons announce (a long one keeps them listed).
    /// - Returns: how many datagrams were sent.
    @discardableResult
    public static func send(
        _ count: Int, to port: UInt16, from sources: [String], interval: Double = 600, perSecond: Int = 20_000
    ) async throws -> Int {
        let instance = UUID().uuidString
        return try await send(count, to: port, from: sources, perSecond: perSecond) { index in
            Beacon(
                kind: .announce, peer: UUID().uuidString, instance: instance, name: "flood \(index)",
                versionID: "2.0.0",
                port: 9, interval: interval, capabilities: ["ack"]
            ).encoded()
        }
    }

    /// Sends `count` datagrams, the `index`th made by `datagram(index)`, round-robin from
    /// `sources`, to 127.0.0.1:`port`, at most `perSecond` a second.
    /// - Returns: how many datagrams were sent.
    @discardableResult
    public static func send(
        _ count: Int, to port: UInt16, from sources: [String], perSecond: Int, datagram: (Int) -> [UInt8]
    ) async throws -> Int {
        let sockets = try sources.map { source -> DatagramSocket in
            guard let address = IPv4Address(source) else { throw SocketError.timedOut("parse \(source)") }
            return try DatagramSocket(address: .v4(address), port: 0)
        }
        let batch = 100
        let pause = Duration.seconds(Double(batch) / Double(max(perSecond, 1)))
        let start = ContinuousClock.now
        var sent = 0
        for index in 0..<count {
            if (try? sockets[index % sockets.count].send(
                datagram(index), to: .loopback,
                port: port)) != nil
            {
                sent += 1
            }
            // Paced against the start, so the time spent making and sending does not slow the rate.
            if index % batch == batch - 1 {
                try await Task.sleep(
                    until: start + pause * ((index + 1) / batch),
                    clock: .continuous)
            }
        }
        return sent
    }
}

/// Loopback addresses for playing `count` hosts: 127.`network`.0.1, 127.`network`.0.2, …
public func loopbackHosts(_ count: Int, network: Int) -> [String] {
    (0..<count).map { "127.\(network).\($0 / 250).\($0 % 250 + 1)" }
}

/// What the kernel says of a process: its resident memory and the CPU time it has used.
public enum ProcessFigures {
    /// Resident memory in bytes (VmRSS), or nil when the process is gone.
    public static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1_024
    }

    /// How many times this network namespace's TCP listen queues overflowed (a connection the
    /// kernel dropped because its listener did not accept fast enough: `TcpExt: ListenOverflows`
    /// of `/proc/net/netstat`), or nil when it cannot be read.
    public static func listenOverflows() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/net/netstat", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("TcpExt:") }
        guard lines.count == 2, let column = lines[0].split(separator: " ").firstIndex(of: "ListenOverflows") else {
            return nil
        }
        let values = lines[1].split(separator: " ")
        return column < values.count ? Int(values[column]) : nil
    }

    /// User plus system CPU time in seconds, or nil when the process is gone.
    public static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is the 3rd field; utime and stime are the 14th and 15th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Each thread's context switches so far, voluntary and not, or nil when the process is gone.
    /// (The kernel keeps them per thread: a thread that ends takes its count with it, so a sum
    /// over a window is made of samples close together; see `SwitchCounter`.)
    public static func contextSwitches(of pid: Int32) -> [Int: Int]? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var counts: [Int: Int] = [:]
        for task in tasks {
            guard let id = Int(task),
                let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            else { continue }
            for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                counts[id, default: 0] +=
                    line.split(separator: "\t").last
                    .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
            }
        }
        return counts
    }

    /// Context switches of a process over a window, summed over its threads from samples taken
    /// every `every`: a thread that starts counts from 0, one that ends loses at most what it did
    /// since the last sample.
    public static func contextSwitches(of pid: Int32, over window: Duration, every: Duration = .milliseconds(500))
        async throws -> Int?
    {
        guard var last = contextSwitches(of: pid) else { return nil }
        var total = 0
        let end = ContinuousClock.now + window
        while ContinuousClock.now < end {
            try await Task.sleep(for: min(every, end - .now))
            guard let now = contextSwitches(of: pid) else { return nil }
            for (thread, count) in now { total += max(0, count - (last[thread] ?? 0)) }
            last = now
        }
        return total
    }

    /// The share of one core the process used over `window`.
    public static func cpuShare(of pid: Int32, over window: Duration) async throws -> Double? {
        guard let before = cpuSeconds(of: pid) else { return nil }
        try await Task.sleep(for: window)
        guard let after = cpuSeconds(of: pid) else { return nil }
        return (after - before) / window.inSeconds
    }
}

/// An honest peer: one Store on a fresh connection, as a sending hexd does it.
public enum HonestSender {
    /// Connects from `source`, sends one hex and waits for its Ack.
    /// - Returns: the time from connecting to the Ack.
    /// - Throws: when the hex is not acknowledged as stored within `timeout`.
    @discardableResult
    public static func store(
        _ description: String, to port: UInt16, from source: String = "127.0.0.1", timeout: Duration = .seconds(5)
    ) async throws -> Duration {
        let line = Envelope.store(
            HexJM(
                senderUUID: UUID().uuidString, senderName: "Honest", hexDescription: description, hexColor: "#3498DB",
                links: [
                    LinkJM(url: "https://example.com/\(description)", linkDescription: "example.com", service: .unknown)
                ]),
            versionID: HexdVersion.current, messageID: UUID().uuidString
        ).encodedLine()
        let clock = ContinuousClock()
        let start = clock.now
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: port), timeout: timeout,
            from: IPAddress(source))
        let connection = StreamConnection(socket: socket, maximumLineLength: 1 << 20)
        try await connection.writeLine(line, timeout: timeout)
        guard case .line(let reply)? = try await connection.readLine(timeout: timeout - (clock.now - start)),
            (try? Envelope.decode(from: reply))?.status == .stored
        else { throw SocketError.timedOut("get a stored Ack for \(description)") }
        return clock.now - start
    }
}
