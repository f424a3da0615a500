import Foundation

/// The values `Tests/quickshare/vectors.py` computed with Python's `cryptography` and hand-written
/// protobuf, independently of hexd (its output is `Tests/quickshare/vectors.txt`).
struct Vectors {
    private let values: [String: String]

    static let file: Vectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("quickshare/vectors.txt")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        return Vectors(values: values)
    }()

    /// A value as bytes; a missing or malformed one is empty, which fails the comparison it is in.
    func bytes(_ name: String) -> [UInt8] {
        guard let hex = values[name] else { return [] }
        return Self.bytes(hex: hex)
    }

    func text(_ name: String) -> String {
        values[name] ?? ""
    }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return [] }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return []
            }
            bytes.append(byte)
        }
        return bytes
    }
}
