// Full Foundation for Process and String(format:): this tool runs real hexd processes.
import Foundation
import HexControl
import HexKit
import HexNet
import HexTLS

/// Two real hexd processes on loopback: how fast they find each other, how fast a killed one is
/// dropped, and the send -> Ack latency against a plain TCP round trip of the same bytes.
struct TransferBenchmark {
    let sends: Int
    let rounds: Int
    let interval = 0.5

    func run() async throws -> [String] {
        var report: [String] = []
        var discoveries: [Double] = []
        var expiries: [Double] = []
        for _ in 0..<rounds {
            let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port
            let start = ContinuousClock.now
            let first = try BenchDaemon(name: "first", discoveryPort: discoveryPort, interval: interval)
            let second = try BenchDaemon(name: "second", discoveryPort: discoveryPort, interval: interval)
            try await first.waitForPeer("second")
            try await second.waitForPeer("first")
            discoveries.append(milliseconds(ContinuousClock.now - start))
            second.kill()
            let killed = ContinuousClock.now
            try await first.waitForNoPeers()
            expiries.append(milliseconds(ContinuousClock.now - killed))
        }
        report.append("transfer: two hexd processes on loopback, announce interval \(interval) s, \(rounds) rounds")
        report.append("  both list each other, from launching both:   median \(format(median(discoveries))) ms, max \(format(discoveries.max() ?? 0)) ms (target < 1000)")
        report.append("  a SIGKILLed peer leaves the table after:      median \(format(median(expiries))) ms, max \(format(expiries.max() ?? 0)) ms "
            + "(3 intervals = \(format(interval * 3_000)) ms; max / 3 intervals = \(format((expiries.max() ?? 0) / (interval * 3_000))))")

        let discoveryPort = try DatagramSocket(address: .loopback, port: 0).port
        let receiver = try BenchDaemon(name: "receiver", discoveryPort: discoveryPort, interval: interval)
        let sender = try BenchDaemon(name: "sender", discoveryPort: discoveryPort, interval: interval)
        try await sender.waitForPeer("receiver")
        let port = try await receiver.status().tcpPort
        let lines = (0..<sends).map { index in
            Envelope.store(
                HexJM(senderUUID: UUID().uuidString, senderName: "bench", hexDescription: "send \(index)", hexColor: "#3498DB",
                      links: [LinkJM(url: "https://example.com/\(index)", linkDescription: "example.com", service: .unknown)]),
                versionID: HexdVersion.current, messageID: UUID().uuidString).encodedLine()
        }
        let echo = try EchoServer()
        let baseline = try await roundTrips(lines, port: echo.port) { _ in true }
        let stored: ([UInt8]) -> Bool = { reply in (try? Envelope.decode(from: reply))?.status == .stored }
        let acked = try await roundTrips(lines, port: port, check: stored)
        // Over TLS, as one peer: one sender UUID for this bench's one key (a key speaks for one UUID).
        let benchUUID = UUID().uuidString
        let tlsLines = (0..<sends).map { index in
            Envelope.store(
                HexJM(senderUUID: benchUUID, senderName: "bench", hexDescription: "tls \(index)", hexColor: "#3498DB",
                      links: [LinkJM(url: "https://example.com/\(index)", linkDescription: "example.com", service: .unknown)]),
                versionID: HexdVersion.current, messageID: UUID().uuidString).encodedLine()
        }
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("hexbench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let tls = try TLSContext(identity: try TLSIdentity.loadOrCreate(keyPath: keys + "/bench.key", certificatePath: keys + "/bench.crt", commonName: "hexbench").0)
        let securedAcks = try await roundTrips(tlsLines, port: port, tls: tls, check: stored)
        let hexctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hexctl").path
        var commands: [Double] = []
        for index in 0..<min(sends, 50) {
            let start = ContinuousClock.now
            let process = Process()
            process.executableURL = URL(fileURLWithPath: hexctl)
            process.arguments = ["send", "--data-dir", sender.directory, "--to", "receiver", "https://example.com/cli/\(index)"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchFailure("hexctl send \(index) exited with \(process.terminationStatus)") }
            commands.append(milliseconds(ContinuousClock.now - start))
        }
        var controlled: [Double] = []
        let client = try ControlClient(socketPath: sender.controlPath)
        for index in 0..<min(sends, 300) {
            let start = ContinuousClock.now
            let response = try await client.request(
                .send(HexDraft(description: "control \(index)", links: [LinkJM(url: "https://example.com/\(index)")]), SendOptions(to: "receiver")), timeout: .seconds(10))
            guard response.send?.status == .stored else { throw BenchFailure("control send \(index): \(response.error?.message ?? "no Ack")") }
            controlled.append(milliseconds(ContinuousClock.now - start))
        }
        // The daemons stop when released; they must outlive every measurement.
        withExtendedLifetime((receiver, sender, echo)) {}
        let baselineMedian = median(baseline)
        report.append("send -> Ack on loopback (a new TCP connection per send, \(sends) sends, ~\(lines[0].count) bytes each)")
        report.append("  baseline: plain TCP connect + line + echoed line: median \(format(baselineMedian)) ms, p99 \(format(percentile(baseline, 0.99))) ms")
        report.append("  envelope -> Ack stored (decode, SQLite commit):   median \(format(median(acked))) ms, p99 \(format(percentile(acked, 0.99))) ms, "
            + "median / baseline \(format(median(acked) / baselineMedian))")
        report.append("  the same over TLS 1.3 (handshake included):       median \(format(median(securedAcks))) ms, p99 \(format(percentile(securedAcks, 0.99))) ms, "
            + "median / plaintext \(format(median(securedAcks) / median(acked))) (target <= 2 ms and <= 3)")
        report.append("  hexctl send wall time (a process, control socket, TLS to the peer, \(commands.count) runs): median \(format(median(commands))) ms, "
            + "p99 \(format(percentile(commands, 0.99))) ms (target <= 15 ms)")
        report.append("  control socket send -> report (the hexctl path over TLS, \(controlled.count) sends): median \(format(median(controlled))) ms, "
            + "p99 \(format(percentile(controlled, 0.99))) ms, median / baseline \(format(median(controlled) / baselineMedian))")
        return report
    }

    /// Connects, writes one line and waits for one line back, once per line; milliseconds each.
    /// - Parameter tls: when given, each connection is TLS with this context (the handshake counts).
    private func roundTrips(_ lines: [[UInt8]], port: UInt16, tls: TLSContext? = nil, check: ([UInt8]) -> Bool) async throws -> [Double] {
        var times: [Double] = []
        for line in lines {
            let start = ContinuousClock.now
            let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
            let stream: any ByteStream = if let tls {
                try await TLSStream.handshake(over: socket, context: tls, as: .client, timeout: .seconds(5))
            } else {
                socket
            }
            let connection = StreamConnection(stream: stream, maximumLineLength: 1 << 20)
            try await connection.writeLine(line, timeout: .seconds(5))
            guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(5)), check(reply) else {
                throw BenchFailure("no good reply from port \(port)")
            }
            times.append(milliseconds(ContinuousClock.now - start))
        }
        return times
    }
}

/// Echoes each line back: the baseline round trip.
private final class EchoServer: Sendable {
    private let listener: StreamListener
    private let task: Task<Void, Never>
    var port: UInt16 { listener.port }

    init() throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        self.listener = listener
        task = Task {
            while let socket = try? await listener.accept() {
                Task {
                    let connection = StreamConnection(socket: socket, maximumLineLength: 1 << 20)
                    while case .line(let line)? = try? await connection.readLine(timeout: .seconds(5)) {
                        try? await connection.writeLine(line, timeout: .seconds(5))
                    }
                }
            }
        }
    }

    deinit { task.cancel() }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func milliseconds(_ duration: Duration) -> Double {
    duration.inSeconds * 1_000
}

func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }
