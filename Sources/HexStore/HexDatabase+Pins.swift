import HexKit

extension HexDatabase {
    public func pin(forPeer uuid: String) throws -> PeerPin? {
        try connection.rows(
            "SELECT peer_uuid, fingerprint, trust FROM peer_key WHERE peer_uuid = ?", [.text(uuid.uppercased())]
        ) { row in
            PeerPin(
                peerUUID: row.string(0), fingerprint: row.string(1),
                trust: SenderTrust(rawValue: row.string(2)) ?? .pinned)
        }.first
    }

    public func pairedPeers() throws -> [String] {
        try connection.rows("SELECT peer_uuid FROM peer_key WHERE trust = 'paired'") { $0.string(0) }
    }

    public func pinnedPeer(forKey fingerprint: String) throws -> String? {
        try connection.rows("SELECT peer_uuid FROM peer_key WHERE fingerprint = ?", [.text(fingerprint.lowercased())]) {
            $0.string(0)
        }.first
    }

    public func setPin(_ pin: PeerPin) throws {
        // Unknown unless the write ends: then what it did.
        var changed = [PinChange.unknown(pin.peerUUID)]
        defer { pinsChanged?(changed) }
        try connection.writeTransaction {
            // The key may have been pinned to another UUID before: it belongs to one at most.
            let unpinned = try connection.rows(
                "SELECT peer_uuid FROM peer_key WHERE fingerprint = ? AND peer_uuid <> ?",
                [.text(pin.fingerprint), .text(pin.peerUUID)]
            ) { $0.string(0) }
            changed += unpinned.map { .unknown($0) }
            try connection.run(
                "DELETE FROM peer_key WHERE fingerprint = ? AND peer_uuid <> ?",
                [.text(pin.fingerprint), .text(pin.peerUUID)])
            try connection.run(
                """
                INSERT INTO peer_key (peer_uuid, fingerprint, trust, pinned_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (peer_uuid) DO UPDATE SET fingerprint = excluded.fingerprint, \
                trust = excluded.trust, pinned_at = excluded.pinned_at
                """,
                [
                    .text(pin.peerUUID), .text(pin.fingerprint), .text(pin.trust == .paired ? "paired" : "pinned"),
                    .date(Date()),
                ])
            changed = [.pinned(pin.peerUUID, fingerprint: pin.fingerprint)] + unpinned.map { .removed($0) }
        }
    }

    public func removePin(forPeer uuid: String) throws -> Bool {
        var changed = [PinChange.unknown(uuid)]
        defer { pinsChanged?(changed) }
        return try connection.writeTransaction {
            try connection.run("DELETE FROM peer_key WHERE peer_uuid = ?", [.text(uuid.uppercased())])
            changed = [.removed(uuid)]
            return connection.changes == 1
        }
    }

    public func movePeer(from old: String, to new: String) throws {
        // IDs are matched in any case: a move onto the same ID (a device's of another kind, kept in
        // its own spelling) is none, and must not delete the pin it would move.
        guard old.uppercased() != new.uppercased() else { return }
        defer { pinsChanged?([.unknown(old), .unknown(new)]) }
        let old = SQLiteValue.text(old.uppercased())
        let new = SQLiteValue.text(new.uppercased())
        try connection.writeTransaction {
            try connection.run("DELETE FROM peer_key WHERE peer_uuid = ?", [new])
            try connection.run("UPDATE peer_key SET peer_uuid = ? WHERE peer_uuid = ?", [new, old])
            try connection.run(
                "DELETE FROM blocked_sender WHERE sender_uuid = ? AND EXISTS "
                    + "(SELECT 1 FROM blocked_sender WHERE sender_uuid = ?)", [new, old])
            try connection.run("UPDATE blocked_sender SET sender_uuid = ? WHERE sender_uuid = ?", [new, old])
            try connection.run("UPDATE outbox SET peer_uuid = ? WHERE peer_uuid = ?", [new, old])
        }
    }
}

/// What a write to the pinned keys did to one peer's pin, for a cache of them elsewhere.
public enum PinChange: Sendable, Equatable {
    /// The peer's key is pinned now, to this fingerprint.
    case pinned(String, fingerprint: String)
    /// No key is pinned to the peer now.
    case removed(String)
    /// The peer's pin may have changed: read it again.
    case unknown(String)
}
