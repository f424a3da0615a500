/// Sizes as people read and write them: `32 MiB` in messages, `32MiB` (or `32m`, `1GiB`, `4096`)
/// in options. Units are binary (1 KiB = 1,024 bytes), as `du -h` and `df -h` count.
public enum ByteCount {
    private static let units: [(suffixes: [String], scale: Int)] = [
        (["", "b"], 1),
        (["k", "kib", "kb"], 1 << 10),
        (["m", "mib", "mb"], 1 << 20),
        (["g", "gib", "gb"], 1 << 30),
        (["t", "tib", "tb"], 1 << 40),
    ]

    /// The bytes `text` says: a whole number, optionally followed by a unit (any case, spaces
    /// allowed between); nil for anything else or a size past `Int.max`.
    public static func parse(_ text: String) -> Int? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count).trimmed.lowercased()
        guard !digits.isEmpty, let number = Int(digits),
            let scale = units.first(where: { $0.suffixes.contains(unit) })?.scale
        else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : bytes
    }

    /// `bytes` in the largest unit it reaches, with one decimal past bytes: `512 bytes`,
    /// `1.5 KiB`, `32.0 MiB`.
    public static func text(_ bytes: Int) -> String {
        guard let unit = units.dropFirst().last(where: { bytes >= $0.scale }) else { return "\(bytes) bytes" }
        let tenths = (Double(bytes) / Double(unit.scale) * 10).rounded() / 10
        let name = unit.suffixes[1]
        return "\(tenths) \(name.prefix(1).uppercased() + name.dropFirst(1).prefix(1) + "B")"
    }
}
