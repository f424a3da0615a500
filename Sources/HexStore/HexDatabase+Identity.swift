import HexKit

extension HexDatabase {
    /// This daemon's identity, kept in the database so the peer UUID survives restarts.
    ///
    /// The first call makes a new UUID.
    /// - Parameters:
    ///   - name: when given, replaces the stored display name (a blank one becomes
    ///     `LocalIdentity.defaultName`); when nil, the stored name is kept.
    ///   - firstName: the name taken when none is given and none is stored yet (a first start).
    public func localIdentity(
        name: String? = nil, firstName: String = LocalIdentity.defaultName
    ) throws -> LocalIdentity {
        try connection.writeTransaction {
            let storedUUID = try setting("peer_uuid").flatMap(UUID.init(uuidString:))
            let storedName = try setting("name")
            let identity = LocalIdentity(uuid: storedUUID ?? UUID(), name: name ?? storedName ?? firstName)
            try setSetting("peer_uuid", identity.uuid)
            try setSetting("name", identity.name)
            return identity
        }
    }

    private func setting(_ key: String) throws -> String? {
        try connection.rows("SELECT value FROM setting WHERE key = ?", [.text(key)]) { $0.string(0) }.first
    }

    private func setSetting(_ key: String, _ value: String) throws {
        try connection.run("INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", [.text(key), .text(value)])
    }
}
