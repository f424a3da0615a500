import CSQLite

/// A failure reported by SQLite, with the statement that caused it.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's extended result code.
    public let code: Int32
    public let message: String
    public let sql: String?

    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        self.code = code
        self.message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        self.sql = sql
    }

    public var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " (in: \($0))" } ?? "")
    }
}
