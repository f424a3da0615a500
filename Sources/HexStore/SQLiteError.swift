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

extension Error {
    /// Whether this is SQLite saying the disk is full (`SQLITE_FULL`), alone or as a `StoreError`.
    public var isDiskFull: Bool {
        switch self {
        case let error as SQLiteError: error.code & 0xFF == SQLITE_FULL
        case StoreError.sqlite(let error) as StoreError: error.code & 0xFF == SQLITE_FULL
        default: false
        }
    }
}
