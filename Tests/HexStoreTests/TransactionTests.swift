import Dispatch
import HexHarness
import HexKit
import HexTestSupport
import Testing

@testable import HexStore

@Suite(.timeLimit(.minutes(5))) struct TransactionTests {
    @Test func readsGoOnWhileAnotherConnectionIsWriting() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let reader = try HexDatabase(path: path)
        let committed = sampleHex("committed")
        _ = try reader.insert(committed, messageID: nil)

        let writer = try SQLiteConnection(path: path)
        try writer.execute("BEGIN IMMEDIATE")
        try writer.execute("DELETE FROM hex")
        // The writer holds the write lock with an uncommitted delete. A reader must neither wait
        // (it would fail after the busy timeout) nor see the uncommitted change.
        #expect(try reader.hexes(in: .inbox) == [committed])
        #expect(try reader.counts().unchecked == 1)
        try writer.execute("COMMIT")
        #expect(try reader.hexes(in: .inbox).isEmpty)
    }

    /// Counts are kept between calls, and counted again after any change: this connection's, or
    /// another's.
    @Test func countsFollowEveryChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let database = try HexDatabase(path: path)
        let first = sampleHex("first")
        _ = try database.insert(first, messageID: nil)
        _ = try database.insert(sampleHex("second"), messageID: nil)
        #expect(try database.counts() == HexCounts(inbox: 2, unchecked: 2, hexlist: 0))
        #expect(try database.counts() == HexCounts(inbox: 2, unchecked: 2, hexlist: 0))
        _ = try database.markChecked(id: first.id)
        #expect(try database.counts() == HexCounts(inbox: 2, unchecked: 1, hexlist: 0), "a change of this connection")
        let other = try SQLiteConnection(path: path)
        try other.execute("UPDATE hex SET checked = 0")
        #expect(
            try database.counts() == HexCounts(inbox: 2, unchecked: 2, hexlist: 0), "a change of another connection")
        try other.execute("DELETE FROM hex")
        #expect(try database.counts() == HexCounts(inbox: 0, unchecked: 0, hexlist: 0))
    }

    @Test func writersOnTwoConnectionsWaitForEachOtherAndLoseNothing() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        _ = try HexDatabase(path: path)
        let perWriter = 150
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    // Each writer owns its connection on its own queue, as the daemon will.
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        DispatchQueue(label: "writer \(writer)").async {
                            continuation.resume(
                                with: Result {
                                    let database = try HexDatabase(path: path)
                                    for index in 0..<perWriter {
                                        _ = try database.insert(
                                            sampleHex("w\(writer)-\(index)"), messageID: "w\(writer)-\(index)")
                                    }
                                })
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let database = try HexDatabase(path: path)
        let inbox = try database.hexes(in: .inbox)
        #expect(inbox.count == 2 * perWriter)
        #expect(inbox.allSatisfy { $0.links.count == 2 })
    }

    @Test func aFailedInsertRecordsNeitherTheHexNorItsMessageID() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let hex = sampleHex("first")
        #expect(try database.insert(hex, messageID: "M-1"))
        // The same hex id again violates the primary key: the whole transaction rolls back.
        #expect(throws: SQLiteError.self) { try database.insert(hex, messageID: "M-2") }
        #expect(try database.hexes(in: .inbox).count == 1)
        #expect(try database.insert(sampleHex("second"), messageID: "M-2"), "M-2 was not recorded by the failed insert")
    }

    @Test func aDuplicateMessageIDStoresNothing() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        #expect(try database.insert(sampleHex("one"), messageID: "M"))
        #expect(try !database.insert(sampleHex("two"), messageID: "M"))
        #expect(try database.hexes(in: .inbox).map(\.hexDescription) == ["one"])
        let links = try SQLiteConnection(path: directory.file("db.sqlite")).integer("SELECT COUNT(*) FROM link")
        #expect(links == 2)
    }

    /// Links go in several rows per statement, and the rest one by one: every count around
    /// the statement's size comes back whole and in order.
    @Test(arguments: [
        0, 1, HexDatabase.linksPerStatement - 1, HexDatabase.linksPerStatement, 2 * HexDatabase.linksPerStatement + 5,
    ])
    func everyLinkIsStoredInOrder(count: Int) throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let hex = sampleHex("\(count) links", linkCount: count)
        _ = try database.insert(hex, messageID: nil)
        _ = try database.insert(sampleHex("another", linkCount: count), messageID: nil)
        #expect(try database.hex(id: hex.id) == hex)
    }

    @Test func textIsStoredExactly() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        var hex = sampleHex("nul \u{0} inside, emoji 👩‍💻, quotes ' \" and; DROP TABLE hex; --")
        hex.links[0].url = String(repeating: "é", count: 100_000)
        // Empty text is text, not NULL (the columns are NOT NULL).
        hex.links[0].linkDescription = ""
        hex.senderName = ""
        _ = try database.insert(hex, messageID: nil)
        #expect(try database.hex(id: hex.id) == hex)
    }
}

@Suite(.timeLimit(.minutes(5))) struct DurabilityTests {
    @Test(arguments: [(HexDatabase.Durability.processCrash, Int64(1)), (.powerLoss, 2)])
    func theDurabilitySettingReachesSQLite(durability: HexDatabase.Durability, synchronous: Int64) throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"), durability: durability)
        // PRAGMA synchronous is per connection: 1 is NORMAL, 2 is FULL.
        #expect(try database.connection.integer("PRAGMA synchronous") == synchronous)
    }
}

@Suite(.timeLimit(.minutes(5))) struct PrefixLookupTests {
    @Test func writesInsideOneTransactionFailAloneAndCommitTogether() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("db.sqlite")
        let database = try HexDatabase(path: path)
        let kept = sampleHex("kept")
        let reader = try HexDatabase(path: path)
        try database.transaction { () throws -> Void in
            #expect(try database.insert(kept, messageID: "m1"))
            // The same hex id again violates the primary key: that write alone is undone.
            #expect(throws: (any Error).self) { try database.insert(kept, messageID: "m2") }
            #expect(try database.insert(sampleHex("also kept"), messageID: "m3"))
            #expect(try reader.hexes(in: .inbox).isEmpty, "nothing is visible before the one commit")
        }
        #expect(try reader.hexes(in: .inbox).map(\.hexDescription).sorted() == ["also kept", "kept"])
        #expect(
            try database.insert(sampleHex("later"), messageID: "m2"), "the failed write left no trace of its messageID")
    }

    @Test func writesInsideAnAllOrNothingTransactionAreUndoneTogether() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let kept = sampleHex("kept")
        #expect(throws: (any Error).self) {
            try database.allOrNothingTransaction { () throws -> Void in
                #expect(try database.insert(kept, messageID: "m1"))
                // The same hex id again violates the primary key, with no savepoint to undo it alone.
                _ = try database.insert(kept, messageID: "m2")
            }
        }
        #expect(try database.hexes(in: .inbox).isEmpty, "the write before the failed one is undone too")
        try database.allOrNothingTransaction { () throws -> Void in
            #expect(try database.insert(kept, messageID: "m1"), "its messageID left no trace")
            #expect(try database.insert(sampleHex("also kept"), messageID: "m2"))
        }
        #expect(try database.hexes(in: .inbox).map(\.hexDescription).sorted() == ["also kept", "kept"])
    }

    @Test func countsComeFromTheDatabaseForEveryLocation() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        #expect(try database.counts() == HexCounts())
        let checked = sampleHex("checked")
        for hex in [sampleHex("a"), sampleHex("b"), checked, sampleHex("mine", location: .myHexlist)] {
            _ = try database.insert(hex, messageID: nil)
        }
        #expect(try database.markChecked(id: checked.id))
        let counts = try database.counts()
        #expect(counts.inbox == 3 && counts.unchecked == 2 && counts.hexlist == 1)
    }

    @Test func hexesAreFoundByAPrefixOfTheirIdInALocation() throws {
        let directory = try TemporaryDirectory()
        let database = try HexDatabase(path: directory.file("db.sqlite"))
        let inbox = sampleHex("inbox")
        let mine = sampleHex("mine", location: .myHexlist)
        _ = try database.insert(inbox, messageID: nil)
        _ = try database.insert(mine, messageID: nil)
        let prefix = String(inbox.id.uuidString.prefix(6))
        #expect(try database.hexIDs(idPrefix: prefix.lowercased(), in: nil, limit: 2) == [inbox.id])
        #expect(try database.hexIDs(idPrefix: prefix, in: .inbox, limit: 2) == [inbox.id])
        #expect(
            try database.hexIDs(idPrefix: inbox.id.uuidString, in: .myHexlist, limit: 2).isEmpty,
            "not in the other location")
        #expect(try database.hexIDs(idPrefix: mine.id.uuidString, in: .myHexlist, limit: 2) == [mine.id])
        #expect(try database.hexIDs(idPrefix: "", in: nil, limit: 1).count == 1, "at most the limit")
        #expect(try database.hexIDs(idPrefix: "", in: nil, limit: 5).count == 2, "the empty prefix matches everything")
        #expect(
            try database.hexIDs(idPrefix: "%_'", in: nil, limit: 5).isEmpty,
            "no pattern characters: a prefix is compared as text")
    }
}
