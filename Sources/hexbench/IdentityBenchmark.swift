// Full Foundation for String(format:) and files: this tool runs real hexd and Python processes.
import Foundation
import HexControl
import HexDaemon
import HexHarness
import HexKit
import HexNet
import HexTLS

/// What device IDs from keys and bounded strangers cost, each figure beside a baseline of the
/// same run:
/// - checking a signed beacon (decode, key, derived ID, Ed25519 signature) against decoding an
///   unsigned one, in this process;
/// - a daemon's CPU under 5,000 beacons a second: unsigned ones of invented peers (what every
///   beacon cost before they were signed), signed ones, signed ones each heard twice (as on a
///   dual-stack link), and forged ones; each also per beacon, against a parse in this process;
/// - a daemon's resident memory with 4,096 TLS connections presenting ordinary certificates and
///   with connections presenting 95 KB ones, and after they close;
/// - under 4,000 bare ClientHellos a second from 192 addresses, a known peer's Store on a fresh
///   TLS connection and `hexctl send` to a peer, against the same with none, and hexd's CPU.
///
/// The attackers run in processes of their own, so that their work is not counted in the honest
/// sender's time: Python (`ssl`, asyncio) holds connections; `hexbench storm` sends ClientHellos.
struct IdentityBenchmark {
    let beacons: Int
    let samples: Int
    let scale: Scale

    func run() async throws -> [String] {
        var report = ["identity: signed beacons, memory per connection, handshakes under a ClientHello storm"]
        let directory = try TemporaryDirectory()
        let (lines, parse) = try verificationCost(in: directory)
        report += lines
        report += try await floodCPU(in: directory, parseMicroseconds: parse)
        report += try await connectionMemory(in: directory)
        report += try await clientHelloStorm(in: directory)
        return report
    }

    // MARK: Beacons

    private func identities(_ count: Int, in directory: TemporaryDirectory) throws -> [TLSIdentity] {
        try (0..<count).map { index in
            try TLSIdentity.loadOrCreate(
                keyPath: directory.file("peer\(index).key"),
                certificatePath: directory.file("peer\(index).crt"),
                commonName: "peer \(index)"
            ).0
        }
    }

    private func beacon(of identity: TLSIdentity, name: String) -> Beacon {
        Beacon(
            kind: .announce, peer: identity.deviceID.uppercaseText, instance: UUID().uuidString, name: name,
            versionID: HexdVersion.current, port: 9, interval: 600, capabilities: ["ack", "tls"],
            fingerprint: identity.fingerprint.description)
    }

    /// A signed beacon with one digit of its signature changed: it costs a full verification.
    private func forged(_ beacon: Beacon) -> Beacon {
        var forged = beacon
        forged.signature = forged.signature.map { ($0.first == "0" ? "1" : "0") + $0.dropFirst() }
        return forged
    }

    /// The report's lines, and the microseconds one unsigned beacon takes to decode here.
    private func verificationCost(in directory: TemporaryDirectory) throws -> (lines: [String], parse: Double) {
        let identity = try identities(1, in: directory)[0]
        let unsigned = Beacon(
            kind: .announce, peer: UUID().uuidString, instance: UUID().uuidString, name: "legacy",
            versionID: "2.0.0", port: 9, interval: 2, capabilities: ["ack"]
        ).encoded()
        guard let signedBeacon = beacon(of: identity, name: "signed").signed(by: identity, boot: 1, sequence: 1) else {
            throw BenchFailure("cannot sign a beacon")
        }
        let signed = signedBeacon.encoded()
        let forgedBytes = forged(signedBeacon).encoded()
        var kept = 0
        let decodeOnly = measure {
            for _ in 0..<beacons { if Beacon.decode(unsigned) != nil { kept += 1 } }
        }
        var verified = 0
        let checked = measure {
            for _ in 0..<beacons {
                if let beacon = Beacon.decode(signed), case .signed = BeaconCheck(beacon) { verified += 1 }
            }
        }
        var known = 0
        let keptKey = signedBeacon.key.flatMap { DeviceKey(hex: $0) }
        let checkedKnown = measure {
            for _ in 0..<beacons {
                if let beacon = Beacon.decode(signed), case .signed = BeaconCheck(beacon, key: keptKey) { known += 1 }
            }
        }
        var refused = 0
        let forgedTime = measure {
            for _ in 0..<beacons {
                if let beacon = Beacon.decode(forgedBytes), case .forged = BeaconCheck(beacon) { refused += 1 }
            }
        }
        guard kept == beacons, verified == beacons, known == beacons, refused == beacons else {
            throw BenchFailure("a beacon was judged wrongly")
        }
        let perBeacon = { (seconds: Double) in seconds / Double(beacons) * 1_000_000 }
        let lines = [
            "  per beacon, \(beacons) each, in this process:",
            "    decode an unsigned beacon (baseline):         \(format(perBeacon(decodeOnly))) µs",
            "    decode and check a signed one:                \(format(perBeacon(checked))) µs "
                + "(\(format(checked / decodeOnly)) x the baseline)",
            "    the same, its key kept from an earlier one:   \(format(perBeacon(checkedKnown))) µs "
                + "(\(format(checkedKnown / decodeOnly)) x)",
            "    decode and refuse a forged one:               \(format(perBeacon(forgedTime))) µs "
                + "(\(format(forgedTime / decodeOnly)) x)",
        ]
        return (lines, perBeacon(decodeOnly))
    }

    /// 5,000 beacons a second for 5 s (1,000 in all when quick) from 300 hosts, four times. The
    /// daemon's beacon budgets are raised (`--beacon-rate 100`: 6,400 datagrams a second from all
    /// sources) so that every beacon is read: what is measured is reading and checking them, not
    /// dropping them unread. Each figure is also given per beacon, against `parseMicroseconds`
    /// (decoding one in this process): a daemon's CPU time over the flood, divided by the beacons.
    private func floodCPU(in directory: TemporaryDirectory, parseMicroseconds: Double) async throws -> [String] {
        let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port
        let daemon = try BenchDaemon(
            name: "target", discoveryPort: discoveryPort, interval: 2,
            extraArguments: ["--beacon-rate", "100"])
        _ = try await daemon.waitForStatus()
        let hosts = loopbackHosts(300, network: 15)
        let count = scale.pick(25_000, quick: 1_000)
        let signers = try identities(50, in: directory)
        let templates = signers.enumerated().map { beacon(of: $1, name: "signer \($0)") }
        // The first `count` for the flood of new ones, the next `count` for the one heard twice.
        var signed: [[UInt8]] = []
        for index in 0..<count * 2 {
            let template = templates[index % templates.count]
            guard
                let beacon = template.signed(
                    by: signers[index % signers.count], boot: 1,
                    sequence: UInt64(index + 1))
            else {
                throw BenchFailure("cannot sign a beacon")
            }
            signed.append(beacon.encoded())
        }
        let forgedBeacons = signed.prefix(1_000).compactMap { Beacon.decode($0).map { forged($0).encoded() } }
        let instance = UUID().uuidString
        let floods: [(String, (Int) -> [UInt8])] = [
            (
                "unsigned beacons of invented peers (baseline)",
                { index in
                    Beacon(
                        kind: .announce, peer: UUID().uuidString, instance: instance, name: "flood \(index)",
                        versionID: "2.0.0",
                        port: 9, interval: 600, capabilities: ["ack"]
                    ).encoded()
                }
            ),
            ("signed beacons of 50 peers, each new", { signed[$0] }),
            ("the same, each heard twice (both families)", { signed[count + $0 / 2] }),
            ("forged signatures", { forgedBeacons[$0 % forgedBeacons.count] }),
        ]
        var report = [
            "  a hexd under 5,000 beacons a second, \(count) of each kind, from 300 hosts "
                + "(--beacon-rate 100: every one read; signatures "
                + "checked within their budgets, 20 a second per peer, the rest dropped and counted below):"
        ]
        var baseline = 0.0
        for (label, datagram) in floods {
            let before = ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0
            let start = ContinuousClock.now
            let sent = try await BeaconFlood.send(
                count, to: discoveryPort, from: hosts, perSecond: 5_000,
                datagram: datagram)
            let seconds = (ContinuousClock.now - start).inSeconds
            // The daemon may still be reading what arrived last.
            try await Task.sleep(for: .milliseconds(200))
            let share = ((ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0) - before) / seconds
            if baseline == 0 { baseline = share }
            let perBeacon = share * seconds / Double(max(sent, 1)) * 1_000_000
            report.append(
                "    \(label): \(sent) in \(format(seconds)) s, CPU \(percent(share)) of a core"
                    + (baseline > 0 && share != baseline ? " (\(format(share / baseline)) x the baseline)" : "")
                    + ", \(format(perBeacon)) µs a beacon (\(format(perBeacon / parseMicroseconds)) x a parse)")
        }
        let status = try await daemon.status()
        report.append(
            "    counted by the daemon: \(status.datagramsForged ?? 0) forged, "
                + "\(status.datagramsReplayed ?? 0) replayed, "
                + "\(status.datagramsRateLimited) over the budgets")
        return report
    }

    // MARK: Connections

    /// The Python attacker: keeps `count` TLS connections open (each reconnecting when the daemon
    /// closes it) for `seconds`, and prints its counts as one line of JSON.
    static let attacker = #"""
        import asyncio, json, resource, ssl, sys, time
        cert, key, port, count, seconds, network = sys.argv[1:7]
        port, count, seconds, network = int(port), int(count), float(seconds), int(network)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(cert, key)
        hosts = ["127.%d.%d.%d" % (network, i // 250, i % 250 + 1) for i in range(600)]
        stats = {"connected": 0, "closedByDaemon": 0, "failed": 0, "open": 0, "peakOpen": 0}

        async def wait_for_end(reader, deadline):
            try:
                data = await asyncio.wait_for(reader.read(65536), max(deadline - time.monotonic(), 0.001))
                while data:
                    data = await asyncio.wait_for(reader.read(65536), max(deadline - time.monotonic(), 0.001))
                stats["closedByDaemon"] += 1
            except (asyncio.TimeoutError, OSError, ssl.SSLError):
                pass

        async def hold(index, deadline):
            while time.monotonic() < deadline:
                try:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(
                        "127.0.0.1", port, ssl=ctx, local_addr=(hosts[index % len(hosts)], 0)), 10)
                except (asyncio.TimeoutError, OSError, ssl.SSLError):
                    stats["failed"] += 1
                    await asyncio.sleep(0.5)
                    continue
                stats["connected"] += 1
                stats["open"] += 1
                stats["peakOpen"] = max(stats["peakOpen"], stats["open"])
                await wait_for_end(reader, deadline)
                stats["open"] -= 1
                writer.transport.abort()

        async def main():
            deadline = time.monotonic() + seconds
            await asyncio.gather(*(hold(index, deadline) for index in range(count)))

        asyncio.run(main())
        print(json.dumps(stats))
        """#

    /// Runs the attacker and returns it running (its output is read by `finish`).
    private func startAttacker(
        certificate: String, port: UInt16, count: Int, seconds: Int, network: Int,
        in directory: TemporaryDirectory
    ) throws -> (SpawnedProcess, Int32) {
        let script = directory.file("attacker.py")
        if !FileManager.default.fileExists(atPath: script) {
            guard FileManager.default.createFile(atPath: script, contents: Data(Self.attacker.utf8)) else {
                throw BenchFailure("cannot write \(script)")
            }
        }
        let output = try SpawnPipe()
        defer { close(output.write) }
        let process = try SpawnedProcess(
            "/usr/bin/env",
            [
                "python3", script, directory.file(certificate + ".crt"), directory.file(certificate + ".key"),
                String(port), String(count), String(seconds), String(network),
            ], standardOutput: output.write, standardError: 2)
        return (process, output.read)
    }

    /// Waits for the attacker to end and returns the line it printed.
    private func finish(_ attacker: (SpawnedProcess, Int32)) -> String {
        outputOnExit(of: attacker.0, reading: attacker.1)
    }

    private func connectionMemory(in directory: TemporaryDirectory) async throws -> [String] {
        let connections = scale.pick(4_096, quick: 128)
        try await makeCertificate("ordinary", names: 0, in: directory)
        try await makeCertificate("large", names: 1_300, in: directory)
        let large = (try? FileManager.default.attributesOfItem(atPath: directory.file("large.crt"))[.size] as? Int) ?? 0
        // What a burst that got in leaves behind: its handshakes are not held to strangers' budgets.
        let daemon = try BenchDaemon(
            name: "target", discoveryPort: 0, interval: 2, extraArguments: ["--stranger-handshakes", "1000000"])
        let port = try await daemon.waitForStatus().tcpPort
        try await Task.sleep(for: .seconds(1))
        let idle = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
        var report = [
            "  a hexd's resident memory, TLS clients in a Python process from 600 loopback hosts:",
            "    idle (baseline): \(mebibytes(idle))",
        ]
        let kinds = [("ordinary", "ordinary certificates"), ("large", "certificates of \(large / 1_024) KiB (PEM)")]
        for (certificate, label) in kinds {
            let attacker = try startAttacker(
                certificate: certificate, port: port, count: connections,
                seconds: scale.pick(20, quick: 3),
                network: 16,
                in: directory)
            var peak = idle
            for _ in 0..<scale.pick(200, quick: 30) {
                try await Task.sleep(for: .milliseconds(100))
                peak = max(peak, ProcessFigures.residentBytes(of: daemon.pid) ?? 0)
            }
            let counts = try await daemon.status().connections
            let said = finish(attacker)
            try await Task.sleep(for: .seconds(scale.pick(10, quick: 2)))
            let after = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
            let ratio = format(Double(peak) / Double(idle))
            report.append(
                "    \(connections) connections with \(label), \(scale.pick(20, quick: 3)) s: "
                    + "peak \(mebibytes(peak)) (\(ratio) x idle), "
                    + "\(counts?.open ?? 0) open at the end; "
                    + "\(scale.pick(10, quick: 2)) s after they closed \(mebibytes(after)) "
                    + "(idle + \(mebibytes(after - idle)); target: idle + 20 MiB at most, 10 s after)")
            report.append(
                "      attackers: \(said); the daemon since its start: \(counts?.accepted ?? 0) accepted, "
                    + "\(counts?.closedInHandshake ?? 0) closed in their handshake, "
                    + "\(counts?.closedForRoom ?? 0) for room, "
                    + "\(counts?.closedAtDeadline ?? 0) at a deadline")
        }
        return report
    }

    /// Under a storm of bare ClientHellos from 192 addresses (`hexbench storm`, a process of its
    /// own pinned to the second core; hexd pinned to the first): a known peer's Store on a fresh
    /// TLS connection, and `hexctl send` to another daemon, each against the same with no storm;
    /// hexd's CPU for the storm, and what its handshake gate did.
    private func clientHelloStorm(in directory: TemporaryDirectory) async throws -> [String] {
        let daemon = try BenchDaemon(name: "target", discoveryPort: 0, interval: 2)
        let port = try await daemon.waitForStatus().tcpPort
        let friend = try BenchDaemon(name: "friend", discoveryPort: 0, interval: 2)
        let friendPort = try await friend.waitForStatus().tcpPort
        try await pin(daemon.pid, toCore: 0)
        // hexd's deliveries to the friend, at 127.0.0.1 over TLS, make that address a known peer's,
        // and the known peer's Stores below come from it.
        let send = [hexctl, "send", "--data-dir", daemon.directory, "--to", "127.0.0.1:\(friendPort)"]
        let quietSends = try await sendTimes(send)
        let known = try TLSContext(identity: try identities(1, in: directory)[0])
        let quiet = try await tlsLatencies(port: port, context: known)
        let hello = try await ClientHelloStorm.hello(as: try identities(2, in: directory)[1])
        guard FileManager.default.createFile(atPath: directory.file("hello"), contents: Data(hello)) else {
            throw BenchFailure("cannot write the ClientHello")
        }
        let rate = scale.pick(4_000, quick: 1_000)
        let seconds = scale.pick(25, quick: 8)
        let output = try SpawnPipe()
        let storm = try SpawnedProcess(
            "/usr/bin/taskset",
            [
                "-c", "1", CommandLine.arguments[0], "storm", directory.file("hello"), String(port),
                String(rate * seconds), String(rate),
            ], standardOutput: output.write, standardError: 2)
        close(output.write)
        let overflowsBefore = ProcessFigures.listenOverflows() ?? 0
        try await Task.sleep(for: .seconds(2))
        // The storm's own cost, measured with no honest traffic beside it.
        let before = ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        let cpu = ((ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0) - before) / (ContinuousClock.now - start).inSeconds
        let stormed = try await tlsLatencies(port: port, context: known)
        let stormedSends = try await sendTimes(send)
        let said = outputOnExit(of: storm, reading: output.read)
        let overflows = (ProcessFigures.listenOverflows() ?? 0) - overflowsBefore
        let counts = try await daemon.status().connections
        let (quietP95, stormedP95) = (percentile(quiet, 0.95), percentile(stormed, 0.95))
        let (quietSend, stormedSend) = (percentile(quietSends, 0.95), percentile(stormedSends, 0.95))
        return [
            "  under \(rate) bare ClientHellos a second from 192 addresses (the storm on one core, hexd on the other):",
            "    a known peer's Store on a fresh TLS connection, \(samples) one after another:",
            "      no storm (baseline): p50 \(format(median(quiet))) ms, p95 \(format(quietP95)) ms",
            "      the storm:           p50 \(format(median(stormed))) ms, p95 \(format(stormedP95)) ms "
                + "(target: p95 <= 100 ms; \(format(stormedP95 / quietP95)) x the baseline)",
            "    hexctl send to a peer, 20 one after another:",
            "      no storm (baseline): p50 \(format(median(quietSends))) ms, p95 \(format(quietSend)) ms",
            "      the storm:           p50 \(format(median(stormedSends))) ms, p95 \(format(stormedSend)) ms "
                + "(\(format(stormedSend / quietSend)) x the baseline; target <= 5 x)",
            "    hexd's CPU for the storm alone (3 s, no honest traffic): \(percent(cpu)) of a core (target <= 50 %)",
            "    the storm: \(said); listen queues overflowed \(overflows) times meanwhile",
            "    hexd's gate: \(counts?.refusedBeforeHandshake ?? 0) strangers' connections closed before their "
                + "handshake, \(counts?.fromKnownPeers ?? 0) from a known peer's address let through; "
                + "TLS handshakes completed \(counts?.tlsHandshakes ?? 0)",
        ]
    }

    /// The `hexctl` beside this `hexbench`.
    private var hexctl: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hexctl").path
    }

    /// 20 runs of `send` with a link of its own each, in milliseconds.
    private func sendTimes(_ send: [String]) async throws -> [Double] {
        var times: [Double] = []
        for index in 0..<20 { times.append(try await commandTime(send + ["https://example.com/\(index)"])) }
        return times
    }

    /// Keeps process `pid` (every thread of it) on CPU `core` alone.
    private func pin(_ pid: Int32, toCore core: Int) async throws {
        let result = try await ChildProcess.run(
            ["/usr/bin/taskset", "-a", "-p", "-c", String(core), String(pid)], timeout: .seconds(10))
        guard result.exitCode == 0 else { throw BenchFailure("taskset: \(result.standardError)") }
    }

    /// The internal command `hexbench storm HELLO PORT COUNT PER-SECOND`: `ClientHelloStorm` with
    /// the ClientHello in file HELLO, against 127.0.0.1:PORT from 192 addresses of 127.17.0.0/24;
    /// prints what its connections saw.
    static func runStorm(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 4, let hello = FileManager.default.contents(atPath: arguments[0]),
            let port = UInt16(arguments[1]), let count = Int(arguments[2]), let rate = Int(arguments[3])
        else { return 64 }
        let outcome = await ClientHelloStorm.run(
            Array(hello), count: count, perSecond: rate, to: port, from: loopbackHosts(192, network: 17))
        print(outcome)
        return 0
    }

    /// `samples` Stores, each on a fresh TLS connection: connect, handshake, Store, Ack (ms).
    private func tlsLatencies(port: UInt16, context: TLSContext) async throws -> [Double] {
        let sender = context.identity.deviceID.uppercaseText
        var latencies: [Double] = []
        for index in 0..<samples {
            let line = Envelope.store(
                HexJM(
                    senderUUID: sender, senderName: "Honest", hexDescription: "sample \(index)",
                    hexColor: "#3498DB",
                    links: [LinkJM(url: "https://example.com/\(index)")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString
            ).encodedLine()
            let start = ContinuousClock.now
            let socket = try await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: port),
                timeout: .seconds(10))
            let stream = try await TLSStream.handshake(
                over: socket, context: context, as: .client,
                timeout: .seconds(10))
            let connection = StreamConnection(stream: stream, maximumLineLength: 1 << 20)
            try await connection.writeLine(line, timeout: .seconds(10))
            guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(10)),
                (try? Envelope.decode(from: reply))?.status == .stored
            else {
                throw BenchFailure("sample \(index) was not stored")
            }
            latencies.append(milliseconds(ContinuousClock.now - start))
            socket.shutdown()
        }
        return latencies
    }

    private func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }
}
