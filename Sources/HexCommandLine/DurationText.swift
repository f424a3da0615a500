/// Durations as people write them on a command line: a number of seconds, or a number followed
/// by `s`, `m`, `h` or `d` (`90`, `30s`, `10m`, `1.5h`, `1d`).
public enum DurationText {
    /// The seconds `text` says; nil unless it is a finite number above 0 with at most one unit.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var number = Substring(text)
        var factor = 1.0
        if let last = number.last, let unit = units[last] {
            factor = unit
            number = number.dropLast()
        }
        // Digits and one point only: no sign, exponent, "inf" or "nan".
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            number.filter({ $0 == "." }).count <= 1, let value = Double(number), value > 0
        else { return nil }
        let seconds = value * factor
        return seconds.isFinite ? seconds : nil
    }
}
