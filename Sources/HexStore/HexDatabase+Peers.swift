import HexKit

extension HexDatabase {
    /// Remembers a sighting of a peer: inserts it, or updates its name, version, address and
    /// last-seen time (keeping when it was first seen).
    public func recordSighting(uuid: String, name: String, versionID: String, address: String, at time: Date = Date())
        throws
    {
        try connection.writeTransaction {
            try connection.run(
                """
                INSERT INTO peer_seen (peer_uuid, name, version_id, address, first_seen, last_seen) \
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (peer_uuid) DO UPDATE SET
                    name = excluded.name, version_id = excluded.version_id, address = excluded.address, \
                last_seen = excluded.last_seen
                """,
                [
                    .text(uuid.uppercased()), .text(name), .text(versionID), .text(address),
                    .date(time), .date(time),
                ])
        }
    }

    /// Forgets sightings older than `cutoff`, and all but the `keeping` most recent: anyone on the
    /// network can invent peers, so what is remembered of them is bounded.
    public func pruneSightings(keeping: Int, seenBefore cutoff: Date) throws {
        try connection.writeTransaction {
            try connection.run("DELETE FROM peer_seen WHERE last_seen < ?", [.date(cutoff)])
            try connection.run(
                "DELETE FROM peer_seen WHERE last_seen <= "
                    + "(SELECT last_seen FROM peer_seen ORDER BY last_seen DESC LIMIT 1 OFFSET ?)",
                [.integer(Int64(keeping))])
        }
    }

    /// The peers seen with this name (any case), at most two: enough to tell one from several.
    public func knownPeers(named name: String) throws -> [KnownPeer] {
        try knownPeers(where: "lower(name) = lower(?) LIMIT 2", [.text(name)])
    }

    /// The peers seen whose UUID starts with `prefix` (any case), at most two.
    public func knownPeers(uuidPrefix prefix: String) throws -> [KnownPeer] {
        try knownPeers(
            where: "substr(peer_uuid, 1, ?) = ? LIMIT 2",
            [.integer(Int64(prefix.utf8.count)), .text(prefix.uppercased())])
    }

    /// The peers seen under `name` (any case) whose key is pinned or paired here, other than
    /// `uuid`: at most 8 UUIDs. A name is not an identity: these are the other devices a person
    /// could take this one for.
    public func pinnedNamesakes(of name: String, excluding uuid: String) throws -> [String] {
        try connection.rows(
            """
            SELECT peer_seen.peer_uuid FROM peer_seen JOIN peer_key ON peer_key.peer_uuid = peer_seen.peer_uuid
            WHERE lower(peer_seen.name) = lower(?) AND peer_seen.peer_uuid <> ? ORDER BY peer_seen.peer_uuid LIMIT 8
            """, [.text(name), .text(uuid.uppercased())]
        ) { $0.string(0) }
    }

    /// Every peer ever seen, most recently seen first.
    public func knownPeers() throws -> [KnownPeer] {
        try knownPeers(where: "1 ORDER BY last_seen DESC", [])
    }

    private func knownPeers(where condition: String, _ arguments: [SQLiteValue]) throws -> [KnownPeer] {
        try connection.rows(
            "SELECT peer_uuid, name, version_id, address, first_seen, last_seen FROM peer_seen WHERE \(condition)",
            arguments
        ) { row in
            KnownPeer(
                uuid: row.string(0), name: row.string(1), versionID: row.string(2), address: row.string(3),
                firstSeen: row.date(4), lastSeen: row.date(5))
        }
    }
}
