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
                try updateSetting("peer_uuid", deviceID.uppercaseText, from: stored?.uppercaseText)
            } else if let stored, !stored.isKeyDerived {
                uuid = stored
            } else {
                let legacy = try setting("legacy_peer_uuid").flatMap(UUID.init(strict:))
                uuid = legacy ?? UUID.random()
                if stored == nil {
                    try setSetting("peer_uuid", uuid.uppercaseText)
                } else {
                    try updateSetting("legacy_peer_uuid", uuid.uppercaseText, from: legacy?.uppercaseText)
                }
            }
            let storedName = try setting("name")
            let identity = LocalIdentity(uuid: uuid, name: name ?? storedName ?? firstName)
            try updateSetting("name", identity.name, from: storedName)
            return (identity, replaced)
        }
    }

    /// The number of this start: the milliseconds since 1970, or one more than the last start's
    /// when the clock is behind it, so that it grows from start to start. Signed beacons carry it,
    /// so a receiver tells a beacon of this run from a replayed one of an earlier run.
    /// - Returns: the number, and whether it was stored. A full disk does not stop a start: the
    ///   number is still later than any stored, though the next start may not know it.
    public func nextBootNumber(at now: Date = Date()) throws -> (number: UInt64, stored: Bool) {
        let last = try setting("boot_number").flatMap { UInt64($0) } ?? 0
        let milliseconds = (now.timeIntervalSince1970 * 1_000).rounded(.down)
        let clock = milliseconds > 0 ? UInt64(exactly: milliseconds) ?? 0 : 0
        let next = max(clock, last == UInt64.max ? last : last + 1)
        do {
            try connection.writeTransaction { try setSetting("boot_number", String(next)) }
            return (next, true)
        } catch {
            return (next, false)
        }
    }

    /// The visibility kept (`hexctl visibility`); visible when none was kept, or what was kept
    /// cannot be read.
    public func visibility() throws -> Visibility {
        try setting("visibility").flatMap(Visibility.init(stored:)) ?? .visible
    }

    /// Keeps the visibility for the next start.
    public func keepVisibility(_ visibility: Visibility) throws {
        try updateSetting("visibility", visibility.stored, from: try setting("visibility"))
    }

    private func setting(_ key: String) throws -> String? {
        try connection.rows("SELECT value FROM setting WHERE key = ?", [.text(key)]) { $0.string(0) }.first
    }

    /// Writes a setting only when it changes: a start writes nothing it need not, so it can start
    /// on a full disk.
    private func updateSetting(_ key: String, _ value: String, from stored: String?) throws {
        if stored != value { try setSetting(key, value) }
    }

    private func setSetting(_ key: String, _ value: String) throws {
        try connection.run("INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", [.text(key), .text(value)])
    }
}
