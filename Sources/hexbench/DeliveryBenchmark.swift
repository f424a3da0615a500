// Full Foundation for Process and String(format:): this tool runs real hexd processes.
import Foundation
import HexControl
import HexKit
import HexNet
import HexTestSupport

/// How much a real hexd takes in, and how it holds up with a large store: acked hexes per second
/// from pipelined senders against Python committing the same rows one transaction each; status,
/// a page of the inbox and RSS with 100,000 hexes stored; the time to ack a 100,000-link hex; and
/// how soon a queued send is delivered once its peer reappears, against the beacon interval.
struct DeliveryBenchmark {
    let hexes: Int
    let stored = 100_000
    let interval = 0.5
    /// Envelopes in flight on one connection before its Acks are read.
    let window = 64

    func run() async throws -> [String] {
        var report: [String] = []
        let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port

        // Throughput, against the per-row floor measured now.
        let floor = try await pythonRowsPerSecond(hexes)
        let receiver = try BenchDaemon(name: "receiver", discoveryPort: discoveryPort, interval: interval)
        _ = try await receiver.waitForStatus()
        let port = try await receiver.status().tcpPort
        let one = try await ackedPerSecond(senders: 1, each: hexes, port: port)
        let eight = try await ackedPerSecond(senders: 8, each: hexes / 8, port: port)
        report.append("delivery: acked hexes per second into one hexd, pipelined (\(window) in flight per connection), plaintext")
        report.append("  Python sqlite3, one transaction per hex (the floor): \(format(floor))/s")
        report.append("  1 sender:  \(format(one))/s = \(format(one / floor))x the floor (target >= 1.5x)")
        report.append("  8 senders: \(format(eight))/s = \(format(eight / floor))x the floor (target >= 1.5x)")
        withExtendedLifetime(receiver) {}

        // A large store.
        let large = try BenchDaemon(name: "large", discoveryPort: discoveryPort, interval: interval)
        _ = try await large.waitForStatus()
        large.stop()
        try await fill(large.directory + "/hexd.sqlite", hexes: stored)
        let reopened = try BenchDaemon(name: "large", discoveryPort: discoveryPort, interval: interval, directory: large.directory)
        let status = try await reopened.waitForStatus()
        try await Task.sleep(for: .seconds(2))
        let idle = ProcessFigures.residentBytes(of: reopened.pid) ?? 0
        let hexctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hexctl").path
        let statusTimes = try await commandTimes([hexctl, "status", "--data-dir", reopened.directory])
        let pageTimes = try await commandTimes([hexctl, "inbox", "--limit", "50", "--data-dir", reopened.directory])
        let versionTimes = try await commandTimes([hexctl, "--version"])
        report.append("store: one hexd with \(status.inbox) hexes in its inbox")
        report.append("  RSS idle: \(mebibytes(idle)) (target <= 40 MB)")
        report.append("  hexctl status: median \(format(median(statusTimes))) ms (target <= 20); hexctl inbox --limit 50: median \(format(median(pageTimes))) ms "
            + "(target <= 30); hexctl --version (no daemon, the process alone): median \(format(median(versionTimes))) ms")
        let bigAck = try await ackTime(links: stored, port: try await reopened.status().tcpPort)
        report.append("  a \(stored)-link hex, written to Ack: \(format(bigAck)) ms (target <= 500)")
        let after = ProcessFigures.residentBytes(of: reopened.pid) ?? 0
        report.append("  RSS after it: \(mebibytes(after))")
        withExtendedLifetime(reopened) {}

        // Alone on a discovery port of its own, so that the peer table holds only the two.
        report.append(try await reappearance(discoveryPort: try DatagramSocket(address: .loopback, port: 0).port))
        return report
    }

    /// Sends `each` Stores on each of `senders` connections at once, `window` at a time, and
    /// returns acked hexes per second over the whole run.
    private func ackedPerSecond(senders: Int, each: Int, port: UInt16) async throws -> Double {
        // Made before the clock starts: what is timed is the daemon taking them in.
        let lines = (0..<senders).map { Self.stores(each, tag: "s\($0)") }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in lines {
                group.addTask { try await self.pipeline(lines: sender, port: port) }
            }
            try await group.waitForAll()
        }
        return Double(senders * each) / (ContinuousClock.now - start).inSeconds
    }

    /// Sends `lines` keeping `window` of them unacked: each time Acks come back, as many lines
    /// go out, in one write.
    private func pipeline(lines: [[UInt8]], port: UInt16) async throws {
        let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
        let connection = StreamConnection(stream: socket, maximumLineLength: 1 << 20)
        var sent = 0
        var acked = 0
        while acked < lines.count {
            let end = min(acked + window, lines.count)
            if sent < end {
                try await connection.writeLines(Array(lines[sent..<end]), timeout: .seconds(30))
                sent = end
            }
            // At least one Ack, then every one already received.
            var reply = try await connection.readLine(timeout: .seconds(30))
            repeat {
                guard case .line(let bytes)? = reply, (try? Envelope.decode(from: bytes))?.status == .stored else {
                    throw BenchFailure("a Store was not acked stored")
                }
                acked += 1
                reply = connection.bufferedLine()
            } while reply != nil
        }
    }

    private static func stores(_ count: Int, tag: String) -> [[UInt8]] {
        (0..<count).map { index in
            Envelope.store(
                HexJM(senderUUID: UUID().uuidString, senderName: "bench", hexDescription: "\(tag) \(index)", hexColor: "#3498DB",
                      links: [LinkJM(url: "https://example.com/\(tag)/\(index)", linkDescription: "example.com", service: .unknown)]),
                versionID: HexdVersion.current, messageID: UUID().uuidString).encodedLine()
        }
    }

    /// Milliseconds from writing one Store of `links` links to reading its Ack.
    private func ackTime(links: Int, port: UInt16) async throws -> Double {
        let hex = HexJM(senderUUID: UUID().uuidString, senderName: "bench", hexDescription: "large", hexColor: "#3498DB",
                        links: (0..<links).map { LinkJM(url: "https://example.com/large/\($0)", linkDescription: "link \($0)", service: .unknown) })
        let line = Envelope.store(hex, versionID: HexdVersion.current, messageID: UUID().uuidString).encodedLine()
        let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
        let connection = StreamConnection(stream: socket, maximumLineLength: 1 << 20)
        let start = ContinuousClock.now
        try await connection.writeLine(line, timeout: .seconds(30))
        guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(30)), (try? Envelope.decode(from: reply))?.status == .stored else {
            throw BenchFailure("the large hex was not acked stored")
        }
        return milliseconds(ContinuousClock.now - start)
    }

    /// Wall times of a command run 20 times, in milliseconds, through a pidfd (no polling).
    private func commandTimes(_ command: [String]) async throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<20 {
            let start = ContinuousClock.now
            let result = try await ChildProcess.run(command, timeout: .seconds(10))
            guard result.exitCode == 0 else { throw BenchFailure("\(command) failed: \(result.standardError)") }
            times.append(milliseconds(ContinuousClock.now - start))
        }
        return times
    }

    /// A send queued while its peer is away, delivered once the peer is started again: the time
    /// from starting it to the sender's outbox being empty, against the beacon interval.
    private func reappearance(discoveryPort: UInt16) async throws -> String {
        let sender = try BenchDaemon(name: "sender", discoveryPort: discoveryPort, interval: interval)
        let away = try BenchDaemon(name: "away", discoveryPort: discoveryPort, interval: interval)
        try await sender.waitForPeer("away")
        away.stop()
        try await sender.waitForNoPeers()
        let draft = HexDraft(links: [LinkJM(url: "https://example.com/later", linkDescription: "", service: .unknown)])
        let queued = try await ControlClient(socketPath: sender.controlPath).request(.send(draft, SendOptions(to: "away", wait: false)), timeout: .seconds(5))
        guard queued.queued != nil else { throw BenchFailure("the send was not queued: \(queued.error?.message ?? "?")") }
        let start = ContinuousClock.now
        let back = try BenchDaemon(name: "away", discoveryPort: discoveryPort, interval: interval, directory: away.directory)
        let deadline = start + .seconds(20)
        while try await sender.status().outbox > 0 {
            guard ContinuousClock.now < deadline else { throw BenchFailure("the queued send was not delivered") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = milliseconds(ContinuousClock.now - start)
        withExtendedLifetime(back) {}
        return "reappearance: a send queued for a stopped peer was delivered \(format(elapsed)) ms after the peer was started again "
            + "(process start included; beacon interval \(format(interval * 1_000)) ms)"
    }

    /// Python committing Store rows (the received message, the hex, its link) one transaction
    /// per hex, in WAL mode with synchronous=NORMAL (a power cut may lose the last of them; hexd's
    /// commits are synced): the non-durable per-row floor, rows per second.
    private func pythonRowsPerSecond(_ count: Int) async throws -> Double {
        let script = """
            import os, sqlite3, sys, tempfile, time, uuid
            path = os.path.join(tempfile.mkdtemp(), "floor.sqlite")
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE hex (id TEXT PRIMARY KEY, location TEXT, position INTEGER, sender_uuid TEXT, sender_name TEXT, description TEXT, color TEXT, created_at REAL, checked INTEGER)")
            db.execute("CREATE INDEX hex_by_location ON hex (location, position)")
            db.execute("CREATE TABLE link (hex_id TEXT, position INTEGER, id TEXT, url TEXT, description TEXT, service TEXT, PRIMARY KEY (hex_id, position))")
            db.execute("CREATE TABLE received_message (message_id TEXT PRIMARY KEY, hex_id TEXT, received_at REAL)")
            count = int(sys.argv[1])
            start = time.perf_counter()
            for i in range(count):
                hex_id = str(uuid.uuid4()).upper()
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO received_message VALUES (?, ?, ?)", (str(uuid.uuid4()), hex_id, time.time()))
                db.execute("INSERT INTO hex VALUES (?, 'inbox', ?, ?, 'bench', ?, '#3498DB', ?, 0)", (hex_id, -i, str(uuid.uuid4()), "floor %d" % i, time.time()))
                db.execute("INSERT INTO link VALUES (?, 0, ?, ?, 'example.com', 'Unknown')", (hex_id, str(uuid.uuid4()), "https://example.com/%d" % i))
                db.execute("COMMIT")
            print(count / (time.perf_counter() - start))
            """
        let result = try await ChildProcess.run(["/usr/bin/env", "python3", "-c", script, String(count)], timeout: .seconds(120))
        guard result.exitCode == 0, let rate = Double(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchFailure("python3 could not measure the floor: \(result.standardError)")
        }
        return rate
    }

    /// Adds `hexes` inbox hexes of one link each to the database at `path`, in one transaction.
    private func fill(_ path: String, hexes: Int) async throws {
        let script = """
            import sqlite3, sys, time, uuid
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN")
            now = time.time() - 978307200
            for i in range(int(sys.argv[2])):
                hex_id = str(uuid.uuid4()).upper()
                db.execute("INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, color, created_at, checked, sender_trust) "
                           "VALUES (?, 'inbox', ?, ?, 'filler', ?, '#3498DB', ?, 0, 'pinned')", (hex_id, -i, str(uuid.uuid4()).upper(), "stored %d" % i, now))
                db.execute("INSERT INTO link VALUES (?, 0, ?, ?, 'example.com', 'Unknown')", (hex_id, str(uuid.uuid4()).upper(), "https://example.com/%d" % i))
            db.execute("COMMIT")
            """
        let result = try await ChildProcess.run(["/usr/bin/env", "python3", "-c", script, path, String(hexes)], timeout: .seconds(300))
        guard result.exitCode == 0 else { throw BenchFailure("python3 could not fill the store: \(result.standardError)") }
    }
}
