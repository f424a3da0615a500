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
/// - a fresh honest TLS connection's Store -> Ack time while 850 bare ClientHellos a second
///   arrive, against the same with none.
///
/// The attacking TLS clients are Python (`ssl`, asyncio): a process of their own, so their work
/// is not counted in the honest sender's time.
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

    /// The Python attackers: `hold` keeps `count` TLS connections open (each reconnecting when the
    /// daemon closes it) for `seconds`; `storm` opens `rate` connections a second that each send
    /// a ClientHello and nothing more. Both print their counts as one line of JSON.
    static let attacker = #"""
        import asyncio, json, resource, ssl, sys, time
        mode, cert, key, port, count, seconds, network = sys.argv[1:8]
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

        def client_hello():
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            tls = ctx.wrap_bio(incoming, outgoing, server_side=False)
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            return outgoing.read()

        async def hello(index, data, deadline):
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(hosts[index % len(hosts)], 0)), 5)
            except (asyncio.TimeoutError, OSError):
                stats["failed"] += 1
                return
            stats["connected"] += 1
            writer.write(data)
            await wait_for_end(reader, deadline)
            writer.transport.abort()

        async def main():
            deadline = time.monotonic() + seconds
            if mode == "hold":
                await asyncio.gather(*(hold(index, deadline) for index in range(count)))
                return
            data, tasks, start, index = client_hello(), [], time.monotonic(), 0
            while time.monotonic() < deadline:
                while index < (time.monotonic() - start) * count:
                    tasks.append(asyncio.ensure_future(hello(index, data, deadline + 1)))
                    index += 1
                await asyncio.sleep(0.005)
            await asyncio.gather(*tasks)

        asyncio.run(main())
        print(json.dumps(stats))
        """#

    /// Runs the attacker in `mode` and returns it running (its output is read by `finish`).
    private func startAttacker(
        _ mode: String, certificate: String, port: UInt16, count: Int, seconds: Int, network: Int,
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
                "python3", script, mode, directory.file(certificate + ".crt"), directory.file(certificate + ".key"),
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
        let daemon = try BenchDaemon(name: "target", discoveryPort: 0, interval: 2)
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
                "hold", certificate: certificate, port: port, count: connections,
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
            try await Task.sleep(for: .seconds(scale.pick(12, quick: 2)))
            let after = ProcessFigures.residentBytes(of: daemon.pid) ?? 0
            let ratio = format(Double(peak) / Double(idle))
            report.append(
                "    \(connections) connections with \(label), \(scale.pick(20, quick: 3)) s: "
                    + "peak \(mebibytes(peak)) (\(ratio) x idle), "
                    + "\(counts?.open ?? 0) open at the end; "
                    + "\(scale.pick(12, quick: 2)) s after they closed \(mebibytes(after)) "
                    + "(idle + \(mebibytes(after - idle)))")
            report.append(
                "      attackers: \(said); the daemon since its start: \(counts?.accepted ?? 0) accepted, "
                    + "\(counts?.closedInHandshake ?? 0) closed in their handshake, "
                    + "\(counts?.closedForRoom ?? 0) for room, "
                    + "\(counts?.closedAtDeadline ?? 0) at a deadline")
        }
        return report
    }

    private func clientHelloStorm(in directory: TemporaryDirectory) async throws -> [String] {
        let daemon = try BenchDaemon(name: "target", discoveryPort: 0, interval: 2)
        let port = try await daemon.waitForStatus().tcpPort
        let honest = try TLSContext(identity: try identities(1, in: directory)[0])
        let quiet = try await tlsLatencies(port: port, context: honest)
        let rate = scale.pick(850, quick: 100)
        let storm = try startAttacker(
            "storm", certificate: "ordinary", port: port, count: rate,
            seconds: scale.pick(25, quick: 5),
            network: 17, in: directory)
        try await Task.sleep(for: .seconds(3))
        let before = ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0
        let start = ContinuousClock.now
        let stormed = try await tlsLatencies(port: port, context: honest)
        let cpu = ((ProcessFigures.cpuSeconds(of: daemon.pid) ?? 0) - before) / (ContinuousClock.now - start).inSeconds
        let said = finish(storm)
        let counts = try await daemon.status().connections
        let (quietP95, stormedP95) = (percentile(quiet, 0.95), percentile(stormed, 0.95))
        return [
            "  a fresh honest TLS connection, Store -> Ack, \(samples) one after another:",
            "    no other traffic (baseline):            p50 \(format(median(quiet))) ms, p95 \(format(quietP95)) ms",
            "    \(rate) bare ClientHellos a second arriving: p50 \(format(median(stormed))) ms, "
                + "p95 \(format(stormedP95)) ms "
                + "(p95 / baseline p95 = \(format(stormedP95 / quietP95))); daemon CPU \(percent(cpu))",
            "      attackers: \(said); closed in their handshake to make room: \(counts?.closedInHandshake ?? 0), "
                + "for room: \(counts?.closedForRoom ?? 0)",
        ]
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
