import Foundation
import HexHarness
import HexTestSupport
import Testing

@testable import HexStore

/// Deferred checkpoints: commits report a full write-ahead log instead of copying it themselves,
/// the owner's checkpoint copies it, and a log past the limit is copied by the commit anyway.
@Suite(.timeLimit(.minutes(5))) struct CheckpointTests {
    /// A connection in WAL mode with a table of one-page rows.
    private func connection(in directory: TemporaryDirectory) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: directory.file("db.sqlite"))
        try connection.execute("PRAGMA journal_mode = WAL; CREATE TABLE page (bytes BLOB)")
        return connection
    }

    /// Commits `count` rows of 4,000 bytes, one commit each.
    private func write(_ count: Int, to connection: SQLiteConnection) throws {
        for _ in 0..<count {
            try connection.writeTransaction { try connection.run("INSERT INTO page VALUES (zeroblob(4000))") }
        }
    }

    private func databaseBytes(_ directory: TemporaryDirectory) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: directory.file("db.sqlite"))[.size] as? Int)
    }

    @Test func aFullLogIsReportedOnceAndCopiedByTheOwnersCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let connection = try connection(in: directory)
        var due = 0
        connection.deferCheckpoints(after: 20, limit: 1_000) { due += 1 }
        let before = try databaseBytes(directory)
        try write(50, to: connection)
        #expect(due == 1, "reported once, not by every commit after the threshold")
        #expect(try databaseBytes(directory) == before, "no commit copied the log")
        try connection.checkpoint()
        #expect(try databaseBytes(directory) > before + 50 * 4_000, "the checkpoint copied the rows")
        try write(50, to: connection)
        #expect(due == 2, "reported again after a checkpoint")
        #expect(try connection.integer("SELECT count(*) FROM page") == 100)
    }

    @Test func pastTheLimitACommitCopiesTheLogItself() throws {
        let directory = try TemporaryDirectory()
        let connection = try connection(in: directory)
        var due = 0
        connection.deferCheckpoints(after: 10, limit: 30) { due += 1 }
        let before = try databaseBytes(directory)
        try write(40, to: connection)
        #expect(due == 1)
        #expect(
            try databaseBytes(directory) > before + 20 * 4_000, "a commit past the limit checkpointed without the owner"
        )
    }
}
