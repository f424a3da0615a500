import HexKit

/// A value bound to, or read from, an SQL statement.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

extension SQLiteValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLiteValue {
    /// How hexd stores a time: seconds since Foundation's reference date, which (unlike seconds
    /// since 1970) reads back as exactly the same `Date`.
    static func date(_ date: Date) -> SQLiteValue { .real(date.timeIntervalSinceReferenceDate) }
}
