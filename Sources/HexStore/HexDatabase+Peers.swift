import HexKit

extension HexDatabase {
    /// Remembers a sighting of a peer: inserts it, or updates its name, version, address and
    /// last-seen time (keeping when it was first seen).
    public func recordSighting(uuid: String, name: String, versionID: String, address: String, at time: Date = Date()) throws {
        try connection.writeTransaction {
            try connection.run(
                """
                INSERT INTO peer_seen (peer_uuid, name, version_id, address, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (peer_uuid) DO UPDATE SET
                    name = excluded.name, version_id = excluded.version_id, address = excluded.address, last_seen = excluded.last_seen
                """,
                [.text(uuid.uppercased()), .text(name), .text(versionID), .text(address),
                 .date(time), .date(time)])
        }
    }

    /// Every peer ever seen, most recently seen first.
    public func knownPeers() throws -> [KnownPeer] {
        try connection.rows(
            "SELECT peer_uuid, name, version_id, address, first_seen, last_seen FROM peer_seen ORDER BY last_seen DESC"
        ) { row in
            KnownPeer(
                uuid: row.string(0), name: row.string(1), versionID: row.string(2), address: row.string(3),
                firstSeen: row.date(4), lastSeen: row.date(5))
        }
    }
}
