import CSQLite
import HexKit

/// A prepared statement, owned by one `SQLiteConnection` and reused from its cache.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    let sql: String

    init(sql: String, connection: OpaquePointer) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw SQLiteError(code: code, connection: connection, sql: sql)
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Runs the statement with `arguments` bound to its `?` parameters in order, and calls `row`
    /// for each result row. The statement is reset afterwards, ready for the next use.
    func run(_ arguments: [SQLiteValue], row: (SQLiteRow) throws -> Void) throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (offset, argument) in arguments.enumerated() {
            try check(bind(argument, at: Int32(clamping: offset + 1)))
        }
        while true {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_ROW: try row(SQLiteRow(handle: handle))
            case SQLITE_DONE: return
            default: throw SQLiteError(code: sqlite3_extended_errcode(connection), connection: connection, sql: sql)
            }
        }
    }

    private func bind(_ value: SQLiteValue, at index: Int32) -> Int32 {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let value): sqlite3_bind_int64(handle, index, value)
        case .real(let value): sqlite3_bind_double(handle, index, value)
        // With its byte count, so a string holding NUL characters is stored whole; from the
        // string's own UTF-8 storage, not a copy made to end it with a NUL.
        case .text(var value):
            value.withUTF8 { bytes in
                guard let start = bytes.baseAddress else {
                    return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
                }
                return sqlite3_bind_text64(
                    handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                    csqlite_transient(), UInt8(truncatingIfNeeded: SQLITE_UTF8))
            }
        }
    }

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: connection, sql: sql) }
    }
}

/// The current row of a running statement; valid only inside the `row` callback.
public struct SQLiteRow {
    fileprivate let handle: OpaquePointer

    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The column as a time written by `SQLiteValue.date`.
    public func date(_ column: Int32) -> Date { Date(timeIntervalSinceReferenceDate: double(column)) }

    /// The column as a time, or nil for SQL NULL.
    public func optionalDate(_ column: Int32) -> Date? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : date(column)
    }

    /// The column as text, or nil for SQL NULL.
    public func optionalString(_ column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : string(column)
    }

    /// The column as text, NUL characters included; an SQL NULL reads as an empty string.
    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }
}
