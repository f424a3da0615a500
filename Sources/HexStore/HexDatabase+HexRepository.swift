import HexKit

extension HexDatabase: HexRepository {
    public func insert(_ hex: Hex, messageID: String?, account: SenderAccount?, charge: Int) throws -> Bool {
        let hexID = hex.id.databaseText
        return try connection.writeTransaction {
            if let messageID {
                try connection.run(
                    "INSERT OR IGNORE INTO received_message (message_id, hex_id, received_at) VALUES (?, ?, ?)",
                    [.text(messageID), .text(hexID), .date(hex.timestamp)])
                guard connection.changes == 1 else { return false }
            }
            try connection.run(
                """
                INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, color, created_at,
                                 checked, sender_trust, size, account)
                VALUES (?, ?, (SELECT COALESCE(MIN(position), 0) - 1 FROM hex WHERE location = ?),
                        ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(hexID), .text(hex.location.rawValue), .text(hex.location.rawValue),
                    .text(hex.senderUUID), .text(hex.senderName), .text(hex.hexDescription), .text(hex.hexColor),
                    .date(hex.timestamp), .integer(hex.isChecked ? 1 : 0),
                    hex.senderTrust.map { .text($0.rawValue) } ?? .null,
                    .integer(Int64(charge)), account.map { .text($0.rawValue) } ?? .null,
                ])
            try insertLinks(of: hex, row: connection.lastInsertedRow)
            return true
        }
    }

    /// Inserts a hex's links, `linksPerStatement` rows per statement and the rest one by one:
    /// a hex may hold 100,000 links, and each run of a statement binds, steps and resets it.
    private func insertLinks(of hex: Hex, row: Int64) throws {
        let many = try connection.statement(Self.insertLinkRows)
        var arguments: [SQLiteValue] = []
        arguments.reserveCapacity(Self.linksPerStatement * 6)
        for (position, link) in hex.links.enumerated() {
            arguments += [
                .integer(row), .integer(Int64(position)), .text(link.id.databaseText), .text(link.url),
                .text(link.linkDescription), .text(link.service.rawValue),
            ]
            if arguments.count == Self.linksPerStatement * 6 {
                try many.run(arguments) { _ in }
                arguments.removeAll(keepingCapacity: true)
            }
        }
        let one = try connection.statement(Self.insertLinkRow)
        for start in stride(from: 0, to: arguments.count, by: 6) {
            try one.run(Array(arguments[start..<start + 6])) { _ in }
        }
    }

    /// Link rows inserted by one statement (6 parameters each, far below SQLite's limit of 32,766).
    static let linksPerStatement = 64
    private static let insertLinkRow =
        "INSERT INTO link (hex_row, position, id, url, description, service) VALUES (?, ?, ?, ?, ?, ?)"
    private static let insertLinkRows =
        insertLinkRow + String(repeating: ", (?, ?, ?, ?, ?, ?)", count: linksPerStatement - 1)

    public func hex(id: UUID) throws -> Hex? {
        try hexes(where: "id = ?", [.text(id.databaseText)]).first
    }

    public func hexes(in location: HexLocation) throws -> [Hex] {
        try hexes(where: "location = ?", [.text(location.rawValue)])
    }

    public func hexIDs(idPrefix prefix: String, in location: HexLocation?, limit: Int) throws -> [UUID] {
        let prefix = prefix.uppercased()
        // A range of the primary key (every id character sorts below "~"), so the lookup reads
        // only the matching ids, however many hexes are stored.
        var condition = "id >= ? AND id < ? AND substr(id, 1, ?) = ?"
        var arguments: [SQLiteValue] = [
            .text(prefix), .text(prefix + "~"), .integer(Int64(prefix.utf8.count)), .text(prefix),
        ]
        if let location {
            condition += " AND location = ?"
            arguments.append(.text(location.rawValue))
        }
        return try connection.rows(
            "SELECT id FROM hex WHERE \(condition) ORDER BY id LIMIT ?", arguments + [.integer(Int64(max(limit, 0)))]
        ) {
            UUID(databaseText: $0.string(0))
        }
    }

    public func summaries(in location: HexLocation, after cursor: UUID?, limit: Int, fieldCharacters: Int) throws
        -> [HexSummary]?
    {
        var start = Int64.min
        if let cursor {
            guard
                let position = try connection.integer(
                    "SELECT position FROM hex WHERE id = ? AND location = ?",
                    [.text(cursor.databaseText), .text(location.rawValue)])
            else { return nil }
            start = position
        }
        let width = SQLiteValue.integer(Int64(max(fieldCharacters, 0)))
        return try connection.rows(
            """
            SELECT id, location, substr(sender_uuid, 1, ?), substr(sender_name, 1, ?), \
            substr(description, 1, ?), substr(color, 1, ?),
                   created_at, checked, (SELECT COUNT(*) FROM link WHERE link.hex_row = hex.row), sender_trust
            FROM hex WHERE location = ? AND position > ? ORDER BY position LIMIT ?
            """,
            [width, width, width, width, .text(location.rawValue), .integer(start), .integer(Int64(max(limit, 0)))]
        ) { row in
            HexSummary(
                id: UUID(databaseText: row.string(0)), location: HexLocation(rawValue: row.string(1)) ?? location,
                senderUUID: row.string(2), senderName: row.string(3), hexDescription: row.string(4),
                hexColor: row.string(5),
                timestamp: row.date(6), isChecked: row.int(7) != 0, linkCount: Int(clamping: row.int(8)),
                senderTrust: SenderTrust(rawValue: row.string(9)))
        }
    }

    /// In one pass over an index (`hex_by_location_checked`), however many hexes are stored, and
    /// again only once the database changed: with 100,000 hexes the pass takes 9-13 ms, which
    /// `status` on an idle daemon paid every time.
    public func counts() throws -> HexCounts {
        let version = try connection.changeVersion()
        if let countsCache, countsCache.version == version { return countsCache.counts }
        var counts = HexCounts()
        try connection.run("SELECT location, checked, COUNT(*) FROM hex GROUP BY location, checked") { row in
            let count = Int(clamping: row.int(2))
            switch row.string(0) {
            case HexLocation.inbox.rawValue:
                counts.inbox += count
                if row.int(1) == 0 { counts.unchecked += count }
            case HexLocation.myHexlist.rawValue: counts.hexlist += count
            default: break
            }
        }
        countsCache = (version, counts)
        return counts
    }

    public func markChecked(id: UUID) throws -> Bool {
        try connection.writeTransaction {
            try connection.run(
                "UPDATE hex SET checked = 1 WHERE id = ? AND location = 'inbox'", [.text(id.databaseText)])
            return connection.changes == 1
        }
    }

    public func hasReceived(messageID: String) throws -> Bool {
        try connection.integer("SELECT 1 FROM received_message WHERE message_id = ?", [.text(messageID)]) != nil
    }

    /// One pass over the inbox's rows and the Alerts': made once, when the daemon starts.
    public func inboxUsage() throws -> [SenderAccount: Int] {
        var usage: [SenderAccount: Int] = [:]
        let sql = """
            SELECT account, SUM(size) FROM (
                SELECT account, size FROM hex WHERE location = 'inbox' AND account IS NOT NULL
                UNION ALL SELECT account, size FROM alert
            ) GROUP BY account
            """
        try connection.run(sql) {
            usage[SenderAccount(rawValue: $0.string(0))] = Int(clamping: $0.int(1))
        }
        return usage
    }

    public func inboxCharge(ofHex id: UUID) throws -> (account: SenderAccount, bytes: Int)? {
        try connection.rows(
            "SELECT account, size FROM hex WHERE id = ? AND location = 'inbox' AND account IS NOT NULL",
            [.text(id.databaseText)]
        ) {
            (SenderAccount(rawValue: $0.string(0)), Int(clamping: $0.int(1)))
        }.first
    }

    public func delete(id: UUID) throws -> Bool {
        try connection.writeTransaction {
            try connection.run("DELETE FROM hex WHERE id = ?", [.text(id.databaseText)])
            return connection.changes == 1
        }
    }

    public func moveInHexlist(id: UUID, to index: Int) throws -> Bool {
        try connection.writeTransaction {
            var order = try connection.rows("SELECT id FROM hex WHERE location = 'myHexlist' ORDER BY position") {
                $0.string(0)
            }
            guard let from = order.firstIndex(of: id.databaseText) else { return false }
            order.insert(order.remove(at: from), at: min(max(index, 0), order.count))
            for (position, hexID) in order.enumerated() {
                try connection.run(
                    "UPDATE hex SET position = ? WHERE id = ?", [.integer(Int64(position)), .text(hexID)])
            }
            return true
        }
    }

    public func isBlocked(senderUUID: String) throws -> Bool {
        try connection.integer("SELECT 1 FROM blocked_sender WHERE sender_uuid = ?", [.text(senderUUID.uppercased())])
            != nil
    }

    public func setBlocked(_ blocked: Bool, senderUUID: String) throws -> Bool {
        try connection.writeTransaction {
            if blocked {
                try connection.run(
                    "INSERT OR IGNORE INTO blocked_sender (sender_uuid, blocked_at) VALUES (?, ?)",
                    [.text(senderUUID.uppercased()), .date(Date())])
            } else {
                try connection.run("DELETE FROM blocked_sender WHERE sender_uuid = ?", [.text(senderUUID.uppercased())])
            }
            return connection.changes == 1
        }
    }

    public func blockedSenders() throws -> [String] {
        try connection.rows("SELECT sender_uuid FROM blocked_sender ORDER BY sender_uuid") { $0.string(0) }
    }

    /// The hexes matching an SQL condition, in list order, each with its links in order.
    private func hexes(where condition: String, _ arguments: [SQLiteValue]) throws -> [Hex] {
        var links: [Int64: [Link]] = [:]
        try connection.run(
            """
            SELECT link.hex_row, link.id, link.url, link.description, link.service
            FROM link WHERE link.hex_row IN (SELECT row FROM hex WHERE \(condition))
            ORDER BY link.hex_row, link.position
            """, arguments
        ) { row in
            links[row.int(0), default: []].append(
                Link(
                    id: UUID(databaseText: row.string(1)), url: row.string(2), linkDescription: row.string(3),
                    service: Service(rawValue: row.string(4))))
        }
        return try connection.rows(
            """
            SELECT id, location, sender_uuid, sender_name, description, color, created_at, checked, sender_trust, row
            FROM hex WHERE \(condition) ORDER BY position
            """, arguments
        ) { row in
            Hex(
                id: UUID(databaseText: row.string(0)), location: HexLocation(rawValue: row.string(1)) ?? .inbox,
                senderUUID: row.string(2), senderName: row.string(3), hexDescription: row.string(4),
                hexColor: row.string(5), links: links[row.int(9)] ?? [],
                timestamp: row.date(6), isChecked: row.int(7) != 0, senderTrust: SenderTrust(rawValue: row.string(8)))
        }
    }
}

extension UUID {
    /// How ids are written in the database: uppercase, as the original app wrote UUIDs.
    var databaseText: String { uppercaseText }

    /// Reads an id the database wrote. The schema only ever holds ids written by `databaseText`;
    /// a damaged one reads as the nil UUID rather than stopping the daemon.
    init(databaseText: String) {
        self = UUID(uuidString: databaseText) ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
}
