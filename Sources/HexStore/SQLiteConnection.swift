import CSQLite

/// One connection to an SQLite database file, with a cache of prepared statements.
///
/// Not thread-safe: one owner uses it at a time (SQLite is opened without its own mutexes).
/// Blocking: call it from a thread that may block, never from the cooperative pool.
public final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// The file this connection opened.
    public let path: String

    /// Opens (and creates if needed) the database at `path`.
    /// - Parameter busyTimeout: how long a statement waits for another connection's lock.
    public init(path: String, busyTimeout: Duration = .seconds(5)) throws(SQLiteError) {
        Self.configureLibrary
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, connection: handle, sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        let (seconds, attoseconds) = busyTimeout.components
        sqlite3_busy_timeout(handle, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    /// Process-wide settings, made once before the first connection opens SQLite.
    private static let configureLibrary: Void = {
        // A storing receiver spent 7% of its time on the statistics' mutex.
        _ = csqlite_disable_memory_statistics()
    }()

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Checkpoints

    /// When checkpoints are the owner's to run (`deferCheckpoints`).
    private struct CheckpointPolicy {
        let after: Int
        let limit: Int
        let due: () -> Void
    }

    private var checkpointPolicy: CheckpointPolicy?
    /// Whether `due` was called and no checkpoint has run since.
    private var checkpointRequested = false
    /// Whether write transactions nested in the current one run without a savepoint of their own
    /// (`allOrNothingTransaction`).
    private var nestedWritesShareTheTransaction = false

    /// Takes checkpoints out of commits. By default the commit that grows the write-ahead log
    /// past SQLite's threshold copies the log into the database file and syncs it before it
    /// returns, so whoever waits for that commit waits for the checkpoint too. Instead, once the
    /// log holds `after` pages a commit calls `due` (once until `checkpoint()` runs), and the
    /// owner checkpoints when it suits it: after answering whoever waited. Past `limit` pages a
    /// commit checkpoints at once, so that the log stays bounded whatever the owner does.
    public func deferCheckpoints(after: Int, limit: Int, due: @escaping () -> Void) {
        checkpointPolicy = CheckpointPolicy(after: after, limit: limit, due: due)
        // Replaces SQLite's own checkpointing hook. Called on this connection's thread, inside
        // the commit; the context is this connection, which outlives its handle.
        sqlite3_wal_hook(
            handle,
            { context, handle, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().committed(
                    logPages: Int(pages), handle: handle)
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func committed(logPages: Int, handle: OpaquePointer?) {
        guard let policy = checkpointPolicy else { return }
        if logPages >= policy.limit {
            // What SQLite's own hook does; a checkpoint that cannot finish now is taken later.
            sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if logPages >= policy.after && !checkpointRequested {
            checkpointRequested = true
            policy.due()
        }
    }

    /// Copies the write-ahead log into the database file as far as no reader needs it, and
    /// syncs the file (a passive checkpoint).
    public func checkpoint() throws(SQLiteError) {
        checkpointRequested = false
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle, sql: nil) }
    }

    /// Runs one or more statements that take no arguments and return no rows (schema, pragmas).
    public func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle, sql: sql) }
    }

    /// Runs one statement, with `arguments` bound in order, calling `row` for each result row.
    /// The statement is prepared once per connection and reused.
    public func run(_ sql: String, _ arguments: [SQLiteValue] = [], row: (SQLiteRow) throws -> Void = { _ in }) throws {
        try statement(sql).run(arguments, row: row)
    }

    /// The rows of a query, each made into a value by `transform`.
    public func rows<T>(_ sql: String, _ arguments: [SQLiteValue] = [], _ transform: (SQLiteRow) throws -> T) throws
        -> [T]
    {
        var result: [T] = []
        try run(sql, arguments) { result.append(try transform($0)) }
        return result
    }

    /// The first column of the first row of a query as an integer, or nil without a row.
    public func integer(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int64? {
        try rows(sql, arguments) { $0.int(0) }.first
    }

    /// How many rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The row number (rowid) of the last row this connection inserted.
    public var lastInsertedRow: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Which state of the database a read saw: equal versions mean no row changed in between,
    /// by this connection (its count of changed rows) or by any other (`PRAGMA data_version`).
    public struct ChangeVersion: Equatable, Sendable {
        let own: Int64
        let others: Int64?
    }

    public func changeVersion() throws -> ChangeVersion {
        ChangeVersion(own: sqlite3_total_changes64(handle), others: try integer("PRAGMA data_version"))
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, so the write lock is taken at the
    /// start and a busy database fails early): committed when `body` returns, rolled back when
    /// it throws. Inside another transaction it is a savepoint of that one: rolled back alone when
    /// `body` throws, committed with the outer transaction (several writes, one commit); inside an
    /// `allOrNothingTransaction`, it is part of that one, with no savepoint.
    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(handle) == 0 {
            if nestedWritesShareTheTransaction { return try body() }
            return try bracket(
                body, begin: "SAVEPOINT nested", end: "RELEASE nested", undo: "ROLLBACK TO nested; RELEASE nested")
        }
        return try bracket(body, begin: "BEGIN IMMEDIATE", end: "COMMIT", undo: "ROLLBACK")
    }

    /// Runs `body` in one write transaction in which nested write transactions make no
    /// savepoints: committed whole when `body` returns, rolled back whole when anything in it
    /// throws. For writes expected to succeed together: a savepoint copies every page it changes
    /// that its transaction had changed before (SQLite's statement journal), a tenth of what a
    /// received hex costs in a group commit. Inside another transaction, it is `writeTransaction`.
    public func allOrNothingTransaction<T>(_ body: () throws -> T) throws -> T {
        guard sqlite3_get_autocommit(handle) != 0 else { return try writeTransaction(body) }
        nestedWritesShareTheTransaction = true
        defer { nestedWritesShareTheTransaction = false }
        return try bracket(body, begin: "BEGIN IMMEDIATE", end: "COMMIT", undo: "ROLLBACK")
    }

    /// Runs `body` between `begin` and `end` (each one statement, prepared once), or `undo` when
    /// it throws.
    private func bracket<T>(_ body: () throws -> T, begin: String, end: String, undo: String) throws -> T {
        try run(begin)
        do {
            let result = try body()
            try run(end)
            return result
        } catch {
            try? execute(undo)
            throw error
        }
    }

    /// The statement for `sql`, prepared once per connection: to run one statement many times
    /// without looking it up each time.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        statements[sql] = statement
        return statement
    }
}
