/// A JSON number as written, converted only when asked and only when the value fits: a
/// conversion never traps and never rounds an integer silently.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal, already checked against JSON's number grammar.
    public let text: String
    /// Written without a fraction or an exponent.
    public let isInteger: Bool

    init(validatedText text: String, isInteger: Bool) {
        self.text = text
        self.isInteger = isInteger
    }

    /// The value as a finite Double (rounded to the nearest), or nil when it overflows.
    public var double: Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// The value as an integer of type `T`, when it is a whole number `T` can hold exactly
    /// (`3`, `3.0` and `3e0` are all 3; `3.5` and `1e30` are not an `Int32`).
    public func integer<T: FixedWidthInteger>(as type: T.Type = T.self) -> T? {
        if isInteger { return Self.parseInteger(text) }
        guard let value = double else { return nil }
        return T(exactly: value)
    }

    /// The decimal text the tolerance rules make of a number where a string belongs: integers
    /// that fit in 64 bits without a fraction (`1.0` and `1e3` are `"1"` and `"1000"`), other
    /// values as Swift prints a Double; nil for a value too large for a Double.
    public var decimalText: String? {
        if let integer = integer(as: Int64.self) { return String(integer) }
        return double.map { String($0) }
    }

    public var description: String { text }

    /// Digits with an optional minus, with overflow checked.
    private static func parseInteger<T: FixedWidthInteger>(_ text: String) -> T? {
        var utf8 = text.utf8[...]
        let negative = utf8.first == UInt8(ascii: "-")
        if negative { utf8 = utf8.dropFirst() }
        guard !negative || T.isSigned else { return utf8.allSatisfy { $0 == UInt8(ascii: "0") } ? 0 : nil }
        var value: T = 0
        for digit in utf8 {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let step = T(digit - UInt8(ascii: "0"))
            let (next, overflowB) =
                negative ? shifted.subtractingReportingOverflow(step) : shifted.addingReportingOverflow(step)
            guard !overflowA, !overflowB else { return nil }
            value = next
        }
        return value
    }
}
