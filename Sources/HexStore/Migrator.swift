/// Brings a database to the newest schema version it knows, one transaction per migration.
struct Migrator {
    let migrations: [Migration]

    var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Refuses (without writing anything) a database whose version is newer than `latestVersion`.
    func checkNotNewer(_ connection: SQLiteConnection) throws {
        let found = try userVersion(connection)
        guard found <= latestVersion else {
            throw StoreError.newerSchema(path: connection.path, found: found, supported: latestVersion)
        }
    }

    /// Applies every migration newer than the database's version. The version is read again
    /// inside each write transaction, so two processes opening one file migrate it once.
    func migrate(_ connection: SQLiteConnection) throws {
        let initial = try userVersion(connection)
        for migration in migrations where migration.version > initial {
            try connection.writeTransaction {
                let current = try userVersion(connection)
                guard current < migration.version else { return }
                try connection.execute(migration.sql)
                try connection.execute("PRAGMA user_version = \(migration.version)")
            }
        }
    }

    private func userVersion(_ connection: SQLiteConnection) throws -> Int {
        Int(try connection.integer("PRAGMA user_version") ?? 0)
    }
}
