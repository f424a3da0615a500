import HexHarness
import HexKit
import HexStore
import HexTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct SchemaMigrationTests {
    @Test func aNewDatabaseHasTheLatestSchemaInWALMode() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("new.sqlite"))
        #expect(try database.schemaVersion() == Schema.migrations.last?.version)
        let connection = try SQLiteConnection(path: directory.file("new.sqlite"))
        #expect(try connection.rows("PRAGMA journal_mode") { $0.string(0) } == ["wal"])
    }

    @Test func reopeningKeepsEverything() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let hex = sampleHex("kept")
        do {
            let database = try HexDatabase(path: path)
            #expect(try database.insert(hex, messageID: "M-1"))
            #expect(try database.setBlocked(true, senderUUID: "abc"))
        }
        let reopened = try HexDatabase(path: path)
        #expect(try reopened.hexes(in: .inbox) == [hex])
        #expect(try reopened.blockedSenders() == ["ABC"])
        #expect(try !reopened.insert(sampleHex("again"), messageID: "M-1"), "message ids seen survive a restart")
    }

    /// The version after the newest this hexd has.
    static let next = (Schema.migrations.last?.version ?? 0) + 1
    static let addPinned = Migration(
        version: next,
        sql: "ALTER TABLE hex ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0; CREATE TABLE note (text TEXT)")

    @Test func anOlderDatabaseIsMigratedAndKeepsItsData() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let hex = sampleHex("from version 1")
        do { _ = try HexDatabase(path: path).insert(hex, messageID: nil) }

        let migrated = try HexDatabase(path: path, migrations: Schema.migrations + [Self.addPinned])
        #expect(try migrated.schemaVersion() == Self.next)
        #expect(try migrated.hexes(in: .inbox) == [hex])
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.integer("SELECT pinned FROM hex") == 0)
        #expect(try connection.integer("SELECT COUNT(*) FROM note") == 0)
        // Opening again applies nothing twice.
        #expect(
            try HexDatabase(path: path, migrations: Schema.migrations + [Self.addPinned]).schemaVersion() == Self.next)
    }

    /// Schema 6 counts the hexes stored before it as `Hex.storedBytes` counts a new one (UTF-8
    /// bytes, not characters), each against its sender's share; the user's own against none.
    @Test func hexesFromBeforeTheBudgetsAreCountedAsNewOnesAre() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        do { _ = try HexDatabase(path: path, migrations: Array(Schema.migrations.prefix(5))) }
        let connection = try SQLiteConnection(path: path)
        let rows: [(id: String, location: String, sender: String, trust: String?)] = [
            ("00000000-0000-4000-8000-000000000001", "inbox", "6F9619FF-8B86-4011-B42D-00C04FC964FF", "plaintext"),
            ("00000000-0000-4000-8000-000000000002", "inbox", "6F9619FF-8B86-8011-B42D-00C04FC964FF", "pinned"),
            ("00000000-0000-4000-8000-000000000003", "myHexlist", "6F9619FF-8B86-8011-B42D-00C04FC96400", nil),
        ]
        for (position, row) in rows.enumerated() {
            try connection.run(
                """
                INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, color, created_at,
                                 checked, sender_trust)
                VALUES (?, ?, ?, ?, 'Zoë 🐝', 'café ☕', '#FF0000', 0, 0, ?)
                """,
                [
                    .text(row.id), .text(row.location), .integer(Int64(position)), .text(row.sender),
                    row.trust.map { .text($0) } ?? .null,
                ])
            for link in 0..<position {
                try connection.run(
                    "INSERT INTO link VALUES (?, ?, ?, 'https://x.example/é', 'ü', 'Dropbox')",
                    [.text(row.id), .integer(Int64(link)), .text("L\(position)-\(link)")])
            }
        }
        let migrated = try HexDatabase(path: path)
        let stored = try rows.map { row in
            let id = try #require(UUID(uuidString: row.id))
            return try #require(try migrated.hex(id: id))
        }
        #expect(
            try migrated.inboxUsage() == [
                SenderAccount(rawValue: "sender:" + rows[0].sender): stored[0].storedBytes,
                .key(rows[1].sender): stored[1].storedBytes,
            ])
        #expect(
            stored[1].storedBytes == Hex.bytesPerHexRow + Hex.bytesPerLinkRow + 36 + "Zoë 🐝".utf8.count
                + "café ☕".utf8.count + 7 + "https://x.example/é".utf8.count + "ü".utf8.count + 7)
    }

    /// Schema 9 keys links by their hex's row, not its UUID: the links of hexes stored before it
    /// stay theirs, in order, and go with them when they are deleted.
    @Test func linksStoredByUUIDAreKeptByRow() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        do { _ = try HexDatabase(path: path, migrations: Array(Schema.migrations.prefix(8))) }
        let ids = ["00000000-0000-4000-8000-00000000000A", "00000000-0000-4000-8000-00000000000B"]
        do {
            let connection = try SQLiteConnection(path: path)
            for (position, id) in ids.enumerated() {
                try connection.run(
                    """
                    INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, color, created_at,
                                     checked, size) VALUES (?, 'inbox', ?, 'S', 'N', ?, '#FFFFFF', 0, 0, 1)
                    """, [.text(id), .integer(Int64(-position)), .text("hex \(position)")])
                // Inserted out of order: the positions, not the insertion, give the order.
                for link in [2, 0, 1] {
                    try connection.run(
                        "INSERT INTO link VALUES (?, ?, ?, ?, 'd', 'Box')",
                        [
                            .text(id), .integer(Int64(link)), .text("L\(position)-\(link)"),
                            .text("https://x.example/\(position)/\(link)"),
                        ])
                }
            }
        }
        let migrated = try HexDatabase(path: path)
        for (position, id) in ids.enumerated() {
            let uuid = try #require(UUID(uuidString: id))
            let hex = try #require(try migrated.hex(id: uuid))
            #expect(hex.links.map(\.url) == (0..<3).map { "https://x.example/\(position)/\($0)" })
        }
        let newer = sampleHex("after", linkCount: 4)
        #expect(try migrated.insert(newer, messageID: nil))
        #expect(try migrated.hex(id: newer.id) == newer)
        let first = try #require(UUID(uuidString: ids[0]))
        #expect(try migrated.delete(id: first))
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.integer("SELECT COUNT(*) FROM link") == 3 + 4, "a deleted hex's links go with it")
        #expect(try connection.rows("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
    }

    @Test func aFailingMigrationChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let hex = sampleHex("safe")
        do { _ = try HexDatabase(path: path).insert(hex, messageID: nil) }

        let broken = Migration(version: Self.next, sql: "CREATE TABLE half (x TEXT); THIS IS NOT SQL")
        #expect(throws: StoreError.self) { try HexDatabase(path: path, migrations: Schema.migrations + [broken]) }
        let database = try HexDatabase(path: path)
        #expect(try database.schemaVersion() == Self.next - 1)
        #expect(try database.hexes(in: .inbox) == [hex])
        #expect(try SQLiteConnection(path: path).integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'") == 0)
    }

    @Test func aDatabaseFromANewerHexdIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        do {
            _ = try HexDatabase(path: path).insert(sampleHex("future"), messageID: nil)
            try SQLiteConnection(path: path).execute("PRAGMA user_version = 99")
        }
        let before = try #require(contents(path))

        do {
            _ = try HexDatabase(path: path)
            Issue.record("a newer database was opened")
        } catch let error as StoreError {
            guard case .newerSchema(let errorPath, let found, let supported) = error else {
                Issue.record("not a newer-schema error: \(error)")
                return
            }
            #expect(errorPath == path && found == 99 && supported == Schema.migrations.last?.version)
            #expect(error.description.contains("left untouched"), "the error the user sees says so: \(error)")
        }
        #expect(contents(path) == before)
        #expect(try SQLiteConnection(path: path).integer("PRAGMA user_version") == 99)
    }

    @Test func aFileThatIsNotADatabaseIsAClearError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("notes.txt")
        let text = Data(String(repeating: "definitely not SQLite\n", count: 100).utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: text))
        do {
            _ = try HexDatabase(path: path)
            Issue.record("a text file was opened as a database")
        } catch StoreError.sqlite(let error) {
            #expect(error.description.contains("not a database"))
        }
        #expect(contents(path) == text)
    }

    @Test func aDatabaseInAMissingDirectoryIsAClearError() {
        #expect(throws: StoreError.self) { try HexDatabase(path: "/nonexistent-\(UUID().uuidString)/db.sqlite") }
    }
}
