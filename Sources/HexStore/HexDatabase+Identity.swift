import HexKit

extension HexDatabase {
    /// This daemon's identity, kept in the database so the peer UUID survives restarts.
    ///
    /// - Parameters:
    ///   - name: when given, replaces the stored display name (a blank one becomes
    ///     `LocalIdentity.defaultName`); when nil, the stored name is kept.
    ///   - firstName: the name taken when none is given and none is stored yet (a first start).
    ///   - deviceID: the ID this device's key derives (Protocol.md, section 12.1), which becomes its
    ///     peer UUID. Nil when playing a legacy peer: a UUID of its own then, made on first call and
    ///     never a derived one (plaintext may not claim those). A UUID from before IDs were derived
    ///     is kept for that use.
    /// - Returns: the identity, and the peer UUID it replaced when `deviceID` is not the one stored
    ///   (a data directory from before IDs were derived from keys), so the change can be reported.
    public func localIdentity(
        name: String? = nil, firstName: String = LocalIdentity.defaultName, deviceID: UUID? = nil
    ) throws -> (identity: LocalIdentity, replaced: String?) {
        try connection.writeTransaction {
            let stored = try setting("peer_uuid").flatMap(UUID.init(strict:))
            var replaced: String?
            let uuid: UUID
            if let deviceID {
                uuid = deviceID
                if let stored, stored != deviceID {
                    replaced = stored.uppercaseText
                    if !stored.isKeyDerived { try setSetting("legacy_peer_uuid", stored.uppercaseText) }
                }
                try setSetting("peer_uuid", deviceID.uppercaseText)
            } else if let stored, !stored.isKeyDerived {
                uuid = stored
            } else {
                uuid = try setting("legacy_peer_uuid").flatMap(UUID.init(strict:)) ?? UUID.random()
                try setSetting(stored == nil ? "peer_uuid" : "legacy_peer_uuid", uuid.uppercaseText)
            }
            let storedName = try setting("name")
            let identity = LocalIdentity(uuid: uuid, name: name ?? storedName ?? firstName)
            try setSetting("name", identity.name)
            return (identity, replaced)
        }
    }

    /// The number of this start: one more than the last (1 on the first). Signed beacons carry
    /// it, so a receiver tells a beacon of this run from a replayed one of an earlier run.
    public func nextBootNumber() throws -> UInt64 {
        try connection.writeTransaction {
            let last = try setting("boot_number").flatMap { UInt64($0) } ?? 0
            let next = last == UInt64.max ? last : last + 1
            try setSetting("boot_number", String(next))
            return next
        }
    }

    private func setting(_ key: String) throws -> String? {
        try connection.rows("SELECT value FROM setting WHERE key = ?", [.text(key)]) { $0.string(0) }.first
    }

    private func setSetting(_ key: String, _ value: String) throws {
        try connection.run("INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", [.text(key), .text(value)])
    }
}
