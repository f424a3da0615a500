import HexKit

/// The kept Alerts (schema 7).
extension HexDatabase {
    public func insertAlert(_ alert: ReceivedAlert, account: SenderAccount) throws {
        try connection.run(
            """
            INSERT INTO alert (id, message, sender_id, address, received_at, size, account)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(alert.id.databaseText), .text(alert.message), alert.senderID.map { .text($0) } ?? .null,
                .text(alert.address), .date(alert.timestamp), .integer(Int64(alert.storedBytes)),
                .text(account.rawValue),
            ])
    }

    public func alerts(after cursor: UUID?, limit: Int) throws -> [ReceivedAlert]? {
        // Newest first: by time, then id, descending; a page starts below its cursor.
        var condition = ""
        var arguments: [SQLiteValue] = []
        if let cursor {
            guard
                let time = try connection.rows(
                    "SELECT received_at FROM alert WHERE id = ?",
                    [.text(cursor.databaseText)], { $0.date(0) }
                ).first
            else { return nil }
            condition = "WHERE (received_at, id) < (?, ?)"
            arguments = [.date(time), .text(cursor.databaseText)]
        }
        return try connection.rows(
            "SELECT id, message, sender_id, address, received_at FROM alert \(condition) "
                + "ORDER BY received_at DESC, id DESC LIMIT ?",
            arguments + [.integer(Int64(max(limit, 0)))]
        ) { row in
            ReceivedAlert(
                id: UUID(databaseText: row.string(0)), message: row.string(1),
                senderID: row.optionalString(2), address: row.string(3), timestamp: row.date(4))
        }
    }

    public func alertIDs(idPrefix prefix: String, limit: Int) throws -> [UUID] {
        let prefix = prefix.uppercased()
        // A range of the primary key, as for hexes (`hexIDs`).
        return try connection.rows(
            "SELECT id FROM alert WHERE id >= ? AND id < ? AND substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
            [
                .text(prefix), .text(prefix + "~"), .integer(Int64(prefix.utf8.count)), .text(prefix),
                .integer(Int64(max(limit, 0))),
            ]
        ) { UUID(databaseText: $0.string(0)) }
    }

    public func deleteAlert(id: UUID) throws -> (alert: ReceivedAlert, account: SenderAccount, bytes: Int)? {
        try connection.writeTransaction {
            let deleted = try connection.rows(
                "SELECT message, sender_id, address, received_at, account, size FROM alert WHERE id = ?",
                [.text(id.databaseText)]
            ) { row in
                (
                    ReceivedAlert(
                        id: id, message: row.string(0), senderID: row.optionalString(1), address: row.string(2),
                        timestamp: row.date(3)),
                    SenderAccount(rawValue: row.string(4)), Int(clamping: row.int(5))
                )
            }.first
            try connection.run("DELETE FROM alert WHERE id = ?", [.text(id.databaseText)])
            return deleted
        }
    }
}
