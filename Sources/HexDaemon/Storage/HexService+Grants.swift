import HexCarrier
import HexKit
import HexStore

/// The grants of files shared with peers, on the store's thread (`FileGrants` decides what they allow).
extension HexService {
    /// Keeps a new grant, first forgetting those that ended a grant lifetime ago.
    func insertGrant(_ grant: FileGrant, forgettingEndedBefore time: Date) throws {
        try database.transaction {
            try database.pruneGrants(endedBefore: time)
            try database.insertGrant(grant)
        }
    }

    func grant(id: String) throws -> FileGrant? {
        try database.grant(id: id)
    }

    func grants(limit: Int) throws -> [FileGrant] {
        try database.grants(limit: limit)
    }

    /// The one grant whose id starts with `prefix` (any case).
    /// - Throws: `LookupError` when none or several match.
    func grant(matching prefix: String) throws -> FileGrant {
        let matches = prefix.isEmpty ? [] : try database.grantIDs(idPrefix: prefix, limit: 2)
        guard let id = matches.first, let grant = try database.grant(id: id) else { throw LookupError.noGrant(prefix) }
        guard matches.count == 1 else { throw LookupError.ambiguousGrant(prefix) }
        return grant
    }

    /// Revokes the grant whose id starts with `prefix`, and returns it as it is now.
    func revokeGrant(matching prefix: String, at time: Date) throws -> FileGrant {
        let grant = try grant(matching: prefix)
        try database.revokeGrant(id: grant.id, at: time)
        return try database.grant(id: grant.id) ?? grant
    }

    func recordFetch(ofGrant id: String, at time: Date) throws {
        try database.recordFetch(ofGrant: id, at: time)
    }

    func updateGrantIdentity(id: String, to identity: FileIdentity) throws {
        try database.updateGrantIdentity(id: id, to: identity)
    }
}
