// Full Foundation for String(format:); binary size does not matter for a benchmark tool.
import Foundation
import HexKit

/// Measures tolerant envelope decoding against the baseline of JSONDecoder decoding the same
/// bytes into plain synthesized-Codable structs of the same shape (no tolerance rules).
struct DecodeBenchmark {
    let envelopeCount: Int
    let rounds: Int

    /// The strict mirror of the wire models: what JSONDecoder does with no tolerance work.
    private struct StrictLink: Decodable { let url: String?, linkDescription: String?, service: String? }
    private struct StrictHex: Decodable {
        let senderUUID: String?, senderName: String?, hexDescription: String?, hexColor: String?
        let links: [StrictLink]?
    }
    private struct StrictEnvelope: Decodable {
        let versionID: String, operationType: String, message: String?, jmObjectType: String?
        let jmObject: StrictHex?, messageID: String?
    }

    func run() throws -> [String] {
        let lines = makeLines()
        // The same bytes in the container each decoder takes, made before any timing.
        let data = lines.map { Data($0) }
        let bytes = lines.reduce(0) { $0 + $1.count }
        let decoder = JSONDecoder()
        var baselineBest = Double.infinity
        var tolerantBest = Double.infinity
        for _ in 0..<rounds {
            let baseline = try measure { for line in data { _ = try decoder.decode(StrictEnvelope.self, from: line) } }
            let tolerant = try measure { for line in lines { _ = try Envelope.decode(from: line) } }
            baselineBest = min(baselineBest, baseline)
            tolerantBest = min(tolerantBest, tolerant)
        }
        let megabytes = Double(bytes) / 1_000_000
        return [
            "decode: \(lines.count) envelopes, \(String(format: "%.2f", megabytes)) MB, best of \(rounds) rounds",
            "  baseline JSONDecoder (strict Codable):         \(Self.rate(megabytes, baselineBest))",
            "  Envelope.decode (own reader, tolerant): \(Self.rate(megabytes, tolerantBest))",
            "  own reader / JSONDecoder throughput: \(String(format: "%.2f", baselineBest / tolerantBest))x",
        ]
    }

    /// Envelopes like those real peers send: a Store with 1 to 8 links, every third one from a
    /// newer peer with extra keys, every fifth one without a messageID (a legacy sender).
    private func makeLines() -> [[UInt8]] {
        (0..<envelopeCount).map { index in
            let links = (0...(index % 8)).map { number in
                LinkJM(
                    url: "https://example.com/files/\(index)/\(number)/report.pdf",
                    linkDescription: "report \(number).pdf", service: .dropbox)
            }
            let hex = HexJM(
                senderUUID: UUID().uuidString, senderName: "Peer \(index)", hexDescription: "bundle \(index)",
                hexColor: "#3498DB", links: links)
            var line = Envelope.store(hex, versionID: "2.0.0", messageID: index % 5 == 0 ? nil : UUID().uuidString)
                .encodedLine()
            if index % 3 == 0 {
                line.removeLast()
                line.append(contentsOf: #","capabilities":["ack","future"],"extra":{"nested":[1,2,3]}}"#.utf8)
            }
            return line
        }
    }

    private static func rate(_ megabytes: Double, _ seconds: Double) -> String {
        String(format: "%7.1f MB/s (%.3f s)", megabytes / seconds, seconds)
    }
}
