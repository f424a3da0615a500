import HexKit

/// The files shared with peers (schema 8).
extension HexDatabase {
    public func insertGrant(_ grant: FileGrant) throws {
        let identity = grant.identity
        try connection.run(
            """
            INSERT INTO file_grant (id, path, name, size, sha256, recipient_id, recipient_name, created_at, expires_at,
                               revoked_at, fetches, last_fetched_at, file_device, file_inode, file_modified)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(grant.id), .text(grant.path), .text(grant.name), .integer(grant.size), .text(grant.sha256),
                .text(grant.recipientID), .text(grant.recipientName), .date(grant.created), .date(grant.expires),
                grant.revoked.map { .date($0) } ?? .null, .integer(Int64(grant.fetches)),
                grant.lastFetched.map { .date($0) } ?? .null, .integer(Int64(bitPattern: identity.device)),
                .integer(Int64(bitPattern: identity.inode)), .integer(identity.modified),
            ])
    }

    public func grant(id: String) throws -> FileGrant? {
        try grants(where: "id = ?", [.text(id.lowercased())]).first
    }

    /// The grants, newest first, at most `limit`.
    public func grants(limit: Int) throws -> [FileGrant] {
        try grants(where: "1", [], order: "ORDER BY created_at DESC, id DESC LIMIT \(max(limit, 0))")
    }

    public func grantIDs(idPrefix prefix: String, limit: Int) throws -> [String] {
        let prefix = prefix.lowercased()
        return try connection.rows(
            "SELECT id FROM file_grant WHERE id >= ? AND id < ? AND substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
            [
                .text(prefix), .text(prefix + "~"), .integer(Int64(prefix.utf8.count)), .text(prefix),
                .integer(Int64(max(limit, 0))),
            ]
        ) { $0.string(0) }
    }

    public func grantCount() throws -> Int {
        Int(clamping: try connection.integer("SELECT count(*) FROM file_grant") ?? 0)
    }

    /// Marks a grant revoked (once: the first time is kept).
    public func revokeGrant(id: String, at time: Date) throws {
        try connection.run(
            "UPDATE file_grant SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
            [.date(time), .text(id)])
    }

    /// Counts a whole fetch served.
    public func recordFetch(ofGrant id: String, at time: Date) throws {
        try connection.run(
            "UPDATE file_grant SET fetches = fetches + 1, last_fetched_at = ? WHERE id = ?",
            [.date(time), .text(id)])
    }

    /// Keeps how the file looks now, once it was hashed again and still holds the granted bytes.
    public func updateGrantIdentity(id: String, to identity: FileIdentity) throws {
        try connection.run(
            "UPDATE file_grant SET file_device = ?, file_inode = ?, file_modified = ? WHERE id = ?",
            [
                .integer(Int64(bitPattern: identity.device)), .integer(Int64(bitPattern: identity.inode)),
                .integer(identity.modified), .text(id),
            ])
    }

    /// Forgets grants that ended (expired or revoked) before `time`.
    @discardableResult
    public func pruneGrants(endedBefore time: Date) throws -> Int {
        try connection.run("DELETE FROM file_grant WHERE expires_at < ? OR revoked_at < ?", [.date(time), .date(time)])
        return connection.changes
    }

    private func grants(where condition: String, _ arguments: [SQLiteValue], order: String = "") throws -> [FileGrant] {
        try connection.rows(
            """
            SELECT id, path, name, size, sha256, recipient_id, recipient_name, created_at, expires_at, revoked_at,
                   fetches, last_fetched_at, file_device, file_inode, file_modified
            FROM file_grant WHERE \(condition) \(order)
            """, arguments
        ) { row in
            FileGrant(
                id: row.string(0), path: row.string(1), name: row.string(2), size: row.int(3),
                sha256: row.string(4), recipientID: row.string(5), recipientName: row.string(6),
                created: row.date(7), expires: row.date(8), revoked: row.optionalDate(9),
                fetches: Int(clamping: row.int(10)), lastFetched: row.optionalDate(11),
                identity: FileIdentity(
                    device: UInt64(bitPattern: row.int(12)),
                    inode: UInt64(bitPattern: row.int(13)), size: row.int(3),
                    modified: row.int(14)))
        }
    }
}
