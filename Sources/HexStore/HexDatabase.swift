import CSQLite
import HexKit

/// hexd's SQLite database: hexes and their links, the block list, message ids seen, peers seen
/// and settings, in one file.
///
/// Opened in WAL mode, so readers on other connections never wait for a writer. Writes are one
/// `BEGIN IMMEDIATE` transaction each. Not thread-safe: one owner serialises calls.
public final class HexDatabase {
    /// What a committed write survives.
    public enum Durability: String, Sendable, CaseIterable {
        /// `synchronous = NORMAL`: a crash of the process; a power loss may lose the last commits.
        case processCrash
        /// `synchronous = FULL`: also a power loss (every commit waits for the disk: in WAL mode,
        /// the log is synced before the commit returns). The daemon's: an Ack, a `queued` answer, a
        /// pin or a block is reported only once it is on disk.
        case powerLoss

        var pragma: String { self == .processCrash ? "NORMAL" : "FULL" }
    }

    let connection: SQLiteConnection
    /// Called after every write to the pinned keys (a pin set, removed or moved) with what it may
    /// have changed, so that readers elsewhere can keep what they cached of them true.
    public var pinsChanged: (@Sendable ([PinChange]) -> Void)?
    /// The last counts, with the database's version when they were made.
    var countsCache: (version: SQLiteConnection.ChangeVersion, counts: HexCounts)?

    /// The write-ahead log pages after which they are copied into the database file (and the
    /// file synced). SQLite's default, 1,000, made a busy receiver checkpoint every few hundred
    /// hexes: a hex dirties pages all over three indexes keyed by random UUIDs, and a page
    /// written again before a checkpoint is copied once. With 4 KiB pages the log stays near
    /// 16 MiB, unless one transaction alone writes more (a hex of 100,000 links writes 19 MiB).
    static let checkpointPages = 4_000

    /// The page cache, in KiB. A hex touches five B-trees keyed by random UUIDs, and SQLite's
    /// default 2 MiB cache made the store's thread spend much of its time reading pages back
    /// (`hexbench delivery`: 8 MiB took eight senders from about 12,600 to 13,900-14,900 acked
    /// hexes/s, for 6 MiB more RSS; 32 MiB gained little more for 14 MiB).
    static let pageCacheKiB = 8_192

    /// Where a commit checkpoints at once, even when checkpoints are deferred.
    static let checkpointLimit = 4 * checkpointPages

    /// Opens the database at `path`, creating it if needed, and migrates it to the newest schema.
    ///
    /// - Parameters:
    ///   - migrations: the schema; tests pass their own to check migrations.
    ///   - durability: what a commit survives; `.powerLoss` unless told otherwise.
    /// - Throws: `StoreError.newerSchema` (the file is left untouched) when a newer hexd wrote it,
    ///   `StoreError.damaged` when SQLite's `quick_check` finds it damaged, `StoreError.sqlite`
    ///   when SQLite cannot open or read it.
    public init(path: String, migrations: [Migration] = Schema.migrations, durability: Durability = .powerLoss) throws {
        do {
            connection = try SQLiteConnection(path: path)
            let migrator = Migrator(migrations: migrations)
            // Checked before any setting is applied: even switching to WAL writes to the file.
            try migrator.checkNotNewer(connection)
            // A damaged file is refused, never served: what it returns could be wrong or partial.
            let findings: [String]
            do {
                findings = try connection.rows("PRAGMA quick_check(5)") { $0.string(0) }
            } catch let error as SQLiteError where error.code & 0xFF == SQLITE_CORRUPT {
                findings = [error.message]
            }
            guard findings == ["ok"] else { throw StoreError.damaged(path: path, findings: findings) }
            try connection.execute(
                """
                PRAGMA journal_mode = WAL; PRAGMA synchronous = \(durability.pragma); PRAGMA foreign_keys = ON;
                PRAGMA wal_autocheckpoint = \(Self.checkpointPages); PRAGMA cache_size = -\(Self.pageCacheKiB);
                PRAGMA temp_store = MEMORY
                """)
            try migrator.migrate(connection)
        } catch let error as SQLiteError {
            throw StoreError.sqlite(error)
        }
    }

    /// Runs `body` in one write transaction: the writes it makes (each its own savepoint) are
    /// committed together when it returns, or all rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try connection.writeTransaction(body)
    }

    /// Runs `body` in one write transaction whose writes make no savepoints of their own:
    /// committed together when it returns, all rolled back when anything in it throws (see
    /// `SQLiteConnection.allOrNothingTransaction`, and `transaction` for writes that fail alone).
    public func allOrNothingTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.allOrNothingTransaction(body)
    }

    /// Leaves checkpoints to the caller: once the write-ahead log holds `checkpointPages`, a
    /// commit calls `due` (on the caller's thread, once until `checkpoint()` runs) instead of
    /// checkpointing before it returns. Past `checkpointLimit` a commit still checkpoints itself.
    public func deferCheckpoints(due: @escaping () -> Void) {
        connection.deferCheckpoints(after: Self.checkpointPages, limit: Self.checkpointLimit, due: due)
    }

    /// Copies the write-ahead log into the database file (a passive checkpoint: readers are
    /// not waited for, and what they still need is copied next time).
    public func checkpoint() throws {
        try connection.checkpoint()
    }

    /// The schema version of the open database.
    public func schemaVersion() throws -> Int {
        Int(try connection.integer("PRAGMA user_version") ?? 0)
    }
}
