// Full Foundation for Process and String(format:): this tool runs real hexd processes.
import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet

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

        // Throughput, against the per-row floors measured now. Every sender is one plaintext
        // address: the budgets are raised so that the store, not a budget, is what is measured.
        let budgets = ["--sender-budget", "1TiB", "--strangers-budget", "1TiB", "--inbox-budget", "1TiB"]
        let durableFloor = try await pythonRowsPerSecond(hexes, synchronous: "FULL")
        let floor = try await pythonRowsPerSecond(hexes, synchronous: "NORMAL")
        let receiver = try BenchDaemon(
            name: "receiver", discoveryPort: discoveryPort, interval: interval,
            extraArguments: budgets)
        _ = try await receiver.waitForStatus()
        let port = try await receiver.status().tcpPort
        let one = try await ackedPerSecond(senders: 1, each: hexes, port: port)
        let eight = try await ackedPerSecond(senders: 8, each: hexes / 8, port: port)
        report.append(
            "delivery: acked hexes per second into one hexd, pipelined (\(window) in flight per connection), "
                + "plaintext; every Ack after its commit is synced")
        report.append(
            "  Python sqlite3, one transaction per hex, synchronous=FULL (the durable floor): "
                + "\(format(durableFloor))/s")
        report.append("  Python sqlite3, one transaction per hex, synchronous=NORMAL (not durable): \(format(floor))/s")
        report.append(
            "  1 sender:  \(format(one))/s = \(format(one / durableFloor))x the FULL floor (target >= 5x), "
                + "\(format(one / floor))x the NORMAL floor (target >= 1.5x)")
        report.append(
            "  8 senders: \(format(eight))/s = \(format(eight / durableFloor))x the FULL floor "
                + "(target >= 8x)")
        report.append("  " + (try await syncsPerThousand(receiver: receiver, port: port)))
        withExtendedLifetime(receiver) {}
        report.append(try await singleHexLatency(discoveryPort: discoveryPort, budgets: budgets))

        // A large store.
        let large = try BenchDaemon(name: "large", discoveryPort: discoveryPort, interval: interval)
        _ = try await large.waitForStatus()
        large.stop()
        try await fill(large.directory + "/hexd.sqlite", hexes: stored)
        let reopened = try BenchDaemon(
            name: "large", discoveryPort: discoveryPort, interval: interval, directory: large.directory)
        let status = try await reopened.waitForStatus()
        try await Task.sleep(for: .seconds(2))
        let idle = ProcessFigures.residentBytes(of: reopened.pid) ?? 0
        let hexctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "hexctl"
        ).path
        let statusTimes = try await commandTimes([hexctl, "status", "--data-dir", reopened.directory])
        let pageTimes = try await commandTimes([hexctl, "inbox", "--limit", "50", "--data-dir", reopened.directory])
        let versionTimes = try await commandTimes([hexctl, "--version"])
        report.append("store: one hexd with \(status.inbox) hexes in its inbox")
        report.append("  RSS idle: \(mebibytes(idle)) (target <= 40 MB)")
        report.append(
            "  hexctl status: median \(format(median(statusTimes))) ms (target <= 20); "
                + "hexctl inbox --limit 50: median \(format(median(pageTimes))) ms "
                + "(target <= 30); hexctl --version (no daemon, the process alone): "
                + "median \(format(median(versionTimes))) ms"
        )
        let bigAck = try await ackTime(links: stored, port: try await reopened.status().tcpPort)
        report.append("  a \(stored)-link hex, written to Ack: \(format(bigAck)) ms (target <= 400)")
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

    /// The syncs (`fsync`, `fdatasync`) the receiver makes per 1,000 hexes from one pipelining
    /// sender, counted by strace attached to it for that run alone.
    private func syncsPerThousand(receiver: BenchDaemon, port: UInt16) async throws -> String {
        guard let strace = ["/usr/bin/strace", "/bin/strace"].first(where: FileManager.default.isExecutableFile) else {
            return "syncs per 1,000 hexes: not counted (strace is not installed)"
        }
        let count = min(hexes, 4_000)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("hexbench-strace-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let tracer = try SpawnedProcess(
            strace,
            [
                "-q", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", output,
                "-p", String(receiver.pid),
            ], standardOutput: 1, standardError: 2)
        // strace says nothing once attached; give it a moment.
        try await Task.sleep(for: .milliseconds(500))
        _ = try await ackedPerSecond(senders: 1, each: count, port: port)
        tracer.send(SIGINT)
        _ = await tracer.exited()
        let summary = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // strace -c: "% time  seconds  usecs/call  calls  errors  syscall"; the calls are the 4th column.
        let syncs = summary.split(separator: "\n").reduce(0) { total, line in
            let fields = line.split(separator: " ")
            guard let name = fields.last, ["fsync", "fdatasync"].contains(name), fields.count >= 5,
                let calls = Int(fields[3])
            else { return total }
            return total + calls
        }
        let perThousand = Double(syncs) * 1_000 / Double(count)
        return "syncs per 1,000 pipelined hexes (strace, \(count) hexes): \(format(perThousand)) "
            + "(target <= 100)"
    }

    /// Send→Ack of one hex at a time (each after the last one's Ack), durable on this disk,
    /// against the same daemon on a tmpfs (/dev/shm), where a sync costs nothing: what the
    /// non-durable path would cost.
    private func singleHexLatency(discoveryPort: UInt16, budgets: [String]) async throws -> String {
        var medians: [String] = []
        for (label, parent) in [
            ("durable (this disk)", FileManager.default.temporaryDirectory.path),
            ("tmpfs (/dev/shm: syncs cost nothing)", "/dev/shm"),
        ] {
            let directory = parent + "/hexbench-latency-\(UUID().uuidString.prefix(8))"
            let daemon = try BenchDaemon(
                name: "latency", discoveryPort: discoveryPort, interval: interval,
                extraArguments: budgets, directory: directory)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            _ = try await daemon.waitForStatus()
            let port = try await daemon.status().tcpPort
            var times: [Double] = []
            let lines = Self.stores(200, tag: "latency")
            let socket = try await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: port),
                timeout: .seconds(5))
            let connection = StreamConnection(stream: socket, maximumLineLength: 1 << 20)
            for line in lines {
                let start = ContinuousClock.now
                try await connection.writeLine(line, timeout: .seconds(5))
                guard case .line? = try await connection.readLine(timeout: .seconds(5)) else {
                    throw BenchFailure("no Ack")
                }
                times.append(milliseconds(ContinuousClock.now - start))
            }
            times.sort()
            let p95 = times[times.count * 95 / 100]
            medians.append("\(label) median \(format(median(times))) ms, p95 \(format(p95)) ms")
            withExtendedLifetime(daemon) {}
        }
        return "single hex, send to Ack (200 in a row on one connection): " + medians.joined(separator: "; ")
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
                HexJM(
                    senderUUID: UUID().uuidString, senderName: "bench", hexDescription: "\(tag) \(index)",
                    hexColor: "#3498DB",
                    links: [
                        LinkJM(
                            url: "https://example.com/\(tag)/\(index)", linkDescription: "example.com",
                            service: .unknown)
                    ]),
                versionID: HexdVersion.current, messageID: UUID().uuidString
            ).encodedLine()
        }
    }

    /// Milliseconds from writing one Store of `links` links to reading its Ack.
    private func ackTime(links: Int, port: UInt16) async throws -> Double {
        let hex = HexJM(
            senderUUID: UUID().uuidString, senderName: "bench", hexDescription: "large", hexColor: "#3498DB",
            links: (0..<links).map {
                LinkJM(url: "https://example.com/large/\($0)", linkDescription: "link \($0)", service: .unknown)
            })
        let line = Envelope.store(hex, versionID: HexdVersion.current, messageID: UUID().uuidString).encodedLine()
        let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
        let connection = StreamConnection(stream: socket, maximumLineLength: 1 << 20)
        let start = ContinuousClock.now
        try await connection.writeLine(line, timeout: .seconds(30))
        guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(30)),
            (try? Envelope.decode(from: reply))?.status == .stored
        else {
            throw BenchFailure("the large hex was not acked stored")
        }
        return milliseconds(ContinuousClock.now - start)
    }

    /// Wall times of a command run 20 times, in milliseconds.
    private func commandTimes(_ command: [String]) async throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<20 {
            times.append(try await commandTime(command))
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
        let queued = try await ControlClient(socketPath: sender.controlPath).request(
            .send(draft, SendOptions(to: "away", wait: false)), timeout: .seconds(5))
        guard queued.queued != nil else {
            throw BenchFailure("the send was not queued: \(queued.error?.message ?? "?")")
        }
        let start = ContinuousClock.now
        let back = try BenchDaemon(
            name: "away", discoveryPort: discoveryPort, interval: interval, directory: away.directory)
        let deadline = start + .seconds(20)
        while try await sender.status().outbox > 0 {
            guard ContinuousClock.now < deadline else { throw BenchFailure("the queued send was not delivered") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = milliseconds(ContinuousClock.now - start)
        withExtendedLifetime(back) {}
        return
            "reappearance: a send queued for a stopped peer was delivered \(format(elapsed)) ms "
            + "after the peer was started again "
            + "(process start included; beacon interval \(format(interval * 1_000)) ms)"
    }

    /// Python committing Store rows (the received message, the hex, its link) one transaction
    /// per hex, in WAL mode with `synchronous` FULL (the durable per-row floor) or NORMAL (a power
    /// cut may lose the last of them): rows per second.
    private func pythonRowsPerSecond(_ count: Int, synchronous: String) async throws -> Double {
        let script = """
            import os, sqlite3, sys, tempfile, time, uuid
            path = os.path.join(tempfile.mkdtemp(), "floor.sqlite")
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=" + sys.argv[2])
            db.execute("CREATE TABLE hex (id TEXT PRIMARY KEY, location TEXT, position INTEGER, sender_uuid TEXT, \
            sender_name TEXT, description TEXT, color TEXT, created_at REAL, checked INTEGER)")
            db.execute("CREATE INDEX hex_by_location ON hex (location, position)")
            db.execute("CREATE TABLE link (hex_id TEXT, position INTEGER, id TEXT, url TEXT, description TEXT, \
            service TEXT, PRIMARY KEY (hex_id, position))")
            db.execute("CREATE TABLE received_message (message_id TEXT PRIMARY KEY, hex_id TEXT, received_at REAL)")
            count = int(sys.argv[1])
            start = time.perf_counter()
            for i in range(count):
                hex_id = str(uuid.uuid4()).upper()
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO received_message VALUES (?, ?, ?)", (str(uuid.uuid4()), hex_id, time.time()))
                db.execute("INSERT INTO hex VALUES (?, 'inbox', ?, ?, 'bench', ?, '#3498DB', ?, 0)", \
            (hex_id, -i, str(uuid.uuid4()), "floor %d" % i, time.time()))
                db.execute("INSERT INTO link VALUES (?, 0, ?, ?, 'example.com', 'Unknown')", \
            (hex_id, str(uuid.uuid4()), "https://example.com/%d" % i))
                db.execute("COMMIT")
            print(count / (time.perf_counter() - start))
            """
        let result = try await ChildProcess.run(
            ["/usr/bin/env", "python3", "-c", script, String(count), synchronous],
            timeout: .seconds(120))
        guard result.exitCode == 0,
            let rate = Double(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
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
                row = db.execute("INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, "
                                 "color, created_at, checked, sender_trust) VALUES (?, 'inbox', ?, ?, 'filler', ?, "
                                 "'#3498DB', ?, 0, 'pinned')",
                                 (hex_id, -i, str(uuid.uuid4()).upper(), "stored %d" % i, now)).lastrowid
                db.execute("INSERT INTO link VALUES (?, 0, ?, ?, 'example.com', 'Unknown')",
                           (row, str(uuid.uuid4()).upper(), "https://example.com/%d" % i))
            db.execute("COMMIT")
            """
        let result = try await ChildProcess.run(
            ["/usr/bin/env", "python3", "-c", script, path, String(hexes)], timeout: .seconds(300))
        guard result.exitCode == 0 else {
            throw BenchFailure("python3 could not fill the store: \(result.standardError)")
        }
    }
}
