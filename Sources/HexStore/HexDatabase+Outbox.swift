import HexKit

extension HexDatabase {
    /// Adds `entry` unless an entry with its `messageID` is there already (which stays as it
    /// was); returns whether it was added.
    public func enqueue(_ entry: OutboxEntry) throws -> Bool {
        try connection.writeTransaction {
            try connection.run(
                """
                INSERT OR IGNORE INTO outbox (message_id, peer_uuid, address, label, kind, envelope, size, legacy, \
                created_at, expires_at,
                                              attempts, next_attempt_at, last_error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(entry.messageID), entry.peerUUID.map { .text($0) } ?? .null,
                    entry.address.map { .text($0) } ?? .null,
                    .text(entry.label), .text(entry.kind.rawValue), .text(entry.envelope),
                    .integer(Int64(entry.envelope.utf8.count)),
                    .integer(entry.legacy ? 1 : 0), .date(entry.createdAt), .date(entry.expiresAt),
                    .integer(Int64(entry.attempts)),
                    .date(entry.nextAttemptAt), entry.lastError.map { .text($0) } ?? .null,
                ])
            return connection.changes == 1
        }
    }

    public func outboxEntry(messageID: String) throws -> OutboxEntry? {
        try outboxEntries(where: "message_id = ?", [.text(messageID.uppercased())], limit: 1).first
    }

    /// The entries whose id starts with `prefix` (any case), at most `limit`.
    public func outboxEntries(idPrefix prefix: String, limit: Int) throws -> [OutboxEntry] {
        try outboxEntries(
            where: "substr(message_id, 1, ?) = ?", [.integer(Int64(prefix.utf8.count)), .text(prefix.uppercased())],
            limit: limit)
    }

    /// The entries due at `time` (next attempt not after it), soonest first (then oldest first:
    /// one peer's sends go in the order they were queued), at most `limit`.
    public func dueOutboxEntries(at time: Date, limit: Int) throws -> [OutboxEntry] {
        try outboxEntries(where: "next_attempt_at <= ?", [.date(time)], limit: limit)
    }

    /// One page of the outbox, soonest next attempt first, starting after the entry `cursor`.
    public func outboxEntries(after cursor: String?, limit: Int) throws -> [OutboxEntry] {
        guard let cursor else { return try outboxEntries(where: "1", [], limit: limit) }
        return try outboxEntries(
            where:
                "(next_attempt_at, created_at, message_id) > "
                + "(SELECT next_attempt_at, created_at, message_id FROM outbox WHERE message_id = ?)",
            [.text(cursor.uppercased())], limit: limit)
    }

    /// When the soonest attempt is due; nil for an empty outbox.
    public func nextOutboxAttempt() throws -> Date? {
        try connection.rows("SELECT next_attempt_at FROM outbox ORDER BY next_attempt_at LIMIT 1") { $0.date(0) }.first
    }

    public func outboxUsage() throws -> OutboxUsage {
        try connection.rows("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM outbox") {
            OutboxUsage(entries: Int(clamping: $0.int(0)), bytes: Int(clamping: $0.int(1)))
        }.first ?? OutboxUsage(entries: 0, bytes: 0)
    }

    /// Records a failed attempt: one more attempt, why, and when the next is due. Returns false
    /// when the entry is gone (cancelled meanwhile).
    @discardableResult
    public func recordFailedAttempt(messageID: String, error: String, nextAttemptAt: Date) throws -> Bool {
        try connection.writeTransaction {
            try connection.run(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE message_id = ?",
                [.text(error), .date(nextAttemptAt), .text(messageID.uppercased())])
            return connection.changes == 1
        }
    }

    /// Sets when an entry's next attempt is due.
    public func scheduleOutbox(messageID: String, at time: Date) throws {
        try connection.writeTransaction {
            try connection.run(
                "UPDATE outbox SET next_attempt_at = ? WHERE message_id = ?",
                [.date(time), .text(messageID.uppercased())])
        }
    }

    /// Makes the entries for `peerUUID` (any case: a UUID is kept in upper case, a device of
    /// another kind in its own spelling; not those bound to an address), or every entry when it
    /// is nil, due at `time` if they were due later. Returns how many.
    @discardableResult
    public func makeOutboxDue(peerUUID: String?, at time: Date) throws -> Int {
        try connection.writeTransaction {
            if let peerUUID {
                try connection.run(
                    "UPDATE outbox SET next_attempt_at = ? "
                        + "WHERE upper(peer_uuid) = ? AND address IS NULL AND next_attempt_at > ?",
                    [.date(time), .text(peerUUID.uppercased()), .date(time)])
            } else {
                try connection.run(
                    "UPDATE outbox SET next_attempt_at = ? WHERE next_attempt_at > ?", [.date(time), .date(time)])
            }
            return connection.changes
        }
    }

    /// Removes an entry; false when it was not there.
    @discardableResult
    public func removeFromOutbox(messageID: String) throws -> Bool {
        try connection.writeTransaction {
            try connection.run("DELETE FROM outbox WHERE message_id = ?", [.text(messageID.uppercased())])
            return connection.changes == 1
        }
    }

    private func outboxEntries(where condition: String, _ arguments: [SQLiteValue], limit: Int) throws -> [OutboxEntry]
    {
        try connection.rows(
            """
            SELECT message_id, peer_uuid, address, label, kind, envelope, legacy, created_at, expires_at, \
            attempts, next_attempt_at, last_error
            FROM outbox WHERE \(condition) ORDER BY next_attempt_at, created_at, message_id LIMIT ?
            """, arguments + [.integer(Int64(max(limit, 0)))]
        ) { row in
            OutboxEntry(
                messageID: row.string(0), peerUUID: row.optionalString(1), address: row.optionalString(2),
                label: row.string(3), kind: OutboxEntry.Kind(rawValue: row.string(4)) ?? .hex, envelope: row.string(5),
                legacy: row.int(6) != 0,
                createdAt: row.date(7), expiresAt: row.date(8), attempts: Int(clamping: row.int(9)),
                nextAttemptAt: row.date(10),
                lastError: row.optionalString(11))
        }
    }
}
