// Full Foundation for String(format:); binary size does not matter for a benchmark tool.
import Foundation
import HexCommandLine
import HexKit
import HexStore

/// Measures receiving Stores end to end into a real SQLite file (decode, HexManager rules,
/// committed transaction) at each durability setting, against decoding the same lines alone.
struct StoreBenchmark {
    let envelopeCount: Int
    let rounds: Int

    func run() throws -> [String] {
        let lines = (0..<envelopeCount).map { index in
            let hex = HexJM(
                senderUUID: UUID().uuidString, senderName: "Peer", hexDescription: "bundle \(index)",
                hexColor: "#3498DB",
                links: (0..<4).map {
                    LinkJM(url: "https://example.com/\(index)/\($0)", linkDescription: "file \($0)", service: .box)
                })
            return Envelope.store(hex, versionID: "2.0.0", messageID: UUID().uuidString).encodedLine()
        }
        var decodeBest = Double.infinity
        var storeBest: [HexDatabase.Durability: Double] = [:]
        for round in 0..<rounds {
            decodeBest = min(decodeBest, try measure { for line in lines { _ = try Envelope.decode(from: line) } })
            for durability in HexDatabase.Durability.allCases {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "hexbench-\(getpid())-\(round)-\(durability)"
                ).path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let database = try HexDatabase(
                    path: directory + "/" + DataDirectory.databaseName, durability: durability)
                var manager = HexManager(
                    repository: database, identity: try database.localIdentity().identity,
                    versionID: HexdVersion.current)
                let seconds = try measure {
                    for line in lines { _ = try manager.receive(try Envelope.decode(from: line)) }
                }
                storeBest[durability] = min(storeBest[durability] ?? .infinity, seconds)
            }
        }
        var report = [
            "store: \(envelopeCount) Store envelopes (4 links each) into a fresh SQLite file "
                + "in \(FileManager.default.temporaryDirectory.path), best of \(rounds) rounds",
            "  baseline decode only:                 \(Self.perEnvelope(decodeBest, envelopeCount))",
        ]
        for durability in HexDatabase.Durability.allCases {
            let seconds = storeBest[durability] ?? .infinity
            report.append(
                "  decode + receive + commit "
                    + "(\(durability.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))): "
                    + "\(Self.perEnvelope(seconds, envelopeCount)), "
                    + "\(String(format: "%.1f", seconds / decodeBest))x decode"
            )
        }
        return report
    }

    private static func perEnvelope(_ seconds: Double, _ count: Int) -> String {
        String(
            format: "%8.1f µs per envelope, %8.0f envelopes/s", seconds / Double(count) * 1e6, Double(count) / seconds)
    }
}
