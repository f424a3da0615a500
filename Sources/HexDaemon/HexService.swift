import HexControl
import HexKit
import HexStore

/// The daemon's hexes: `HexManager` over the SQLite database, serialised on its own thread.
actor HexService {
    private let executor = DispatchQueueExecutor(label: "hexd.store")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let database: HexDatabase
    private let manager: HexManager
    nonisolated let identity: LocalIdentity

    init(databasePath: String, name: String?, versionID: String) throws {
        database = try HexDatabase(path: databasePath)
        identity = try database.localIdentity(name: name)
        manager = HexManager(repository: database, identity: identity, versionID: versionID)
    }

    /// Acts on a received envelope and returns the outcome with the reply owed (after commit).
    func receive(_ envelope: Envelope) throws -> (ReceiveOutcome, Envelope?) {
        let outcome = try manager.receive(envelope)
        return (outcome, manager.reply(to: envelope, outcome: outcome))
    }

    func reply(toUnreadable error: EnvelopeDecodingError) -> Envelope {
        manager.reply(toUnreadable: error)
    }

    /// The Store envelope for a hex made of `links`, not kept anywhere (a one-off send).
    func storeEnvelope(description: String, color: String, links: [Link], legacy: Bool) throws -> Envelope {
        try usage { manager.storeEnvelope(for: try manager.ownHex(description: description, color: color, links: links), legacy: legacy) }
    }

    /// The Store envelope for a stored hex.
    func storeEnvelope(forHex prefix: String, legacy: Bool) throws -> Envelope {
        manager.storeEnvelope(for: try hex(matching: prefix, in: .myHexlist), legacy: legacy)
    }

    func alertEnvelope(_ message: String) -> Envelope {
        .alert(message, versionID: manager.versionID, messageID: UUID().uuidString.uppercased())
    }

    /// Counted by the database, without loading a hex.
    func counts() throws -> (inbox: Int, unchecked: Int, hexlist: Int) {
        (try manager.count(in: .inbox), try manager.uncheckedCount(), try manager.count(in: .myHexlist))
    }

    /// One page of a location's list (see `HexManager.summaries`).
    func summaries(in location: HexLocation, after cursor: String?, limit: Int, fieldCharacters: Int) throws -> [HexSummary] {
        var start: UUID?
        if let cursor {
            guard let id = UUID(uuidString: cursor) else { throw ControlError(.usage, "\"after\" must be a hex id, not '\(cursor.clipped(toUTF8: 40))'") }
            start = id
        }
        do {
            return try manager.summaries(in: location, after: start, limit: limit, fieldCharacters: fieldCharacters)
        } catch let error as HexManagerError {
            throw ControlError(.notFound, "\(error); it may have been deleted since it was listed")
        }
    }

    func show(_ prefix: String) throws -> Hex { try hex(matching: prefix, in: nil) }

    func check(_ prefix: String) throws -> Hex {
        let hex = try hex(matching: prefix, in: .inbox)
        try manager.markChecked(id: hex.id)
        return try manager.hex(id: hex.id)
    }

    func delete(_ prefix: String, from location: HexLocation) throws -> Hex {
        let hex = try hex(matching: prefix, in: location)
        try manager.delete(id: hex.id)
        return hex
    }

    func saveToMyHexlist(_ prefix: String) throws -> Hex {
        try manager.saveToMyHexlist(id: try hex(matching: prefix, in: .inbox).id)
    }

    func createHex(description: String, color: String, links: [Link]) throws -> Hex {
        try usage { try manager.createHex(description: description, color: color, links: links) }
    }

    /// Runs `body`, reporting a bad value from the user (an invalid colour) as a usage error.
    private func usage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as HexManagerError {
            throw ControlError(.usage, error.description)
        }
    }

    func move(_ prefix: String, to index: Int) throws -> Hex {
        let hex = try hex(matching: prefix, in: .myHexlist)
        try manager.moveInHexlist(id: hex.id, to: index)
        return hex
    }

    func setBlocked(_ blocked: Bool, senderUUID: String) throws -> [String] {
        if blocked { try manager.block(senderUUID: senderUUID) } else { try manager.unblock(senderUUID: senderUUID) }
        return try manager.blockedSenders()
    }

    func blockedSenders() throws -> [String] { try manager.blockedSenders() }

    /// Remembers a peer; every `sightingsPerPrune` sightings, forgets the oldest beyond
    /// `maximumSightings` and those older than `sightingLifetime`.
    func recordSighting(uuid: String, name: String, versionID: String, address: String) throws {
        try database.recordSighting(uuid: uuid, name: name, versionID: versionID, address: address)
        sightingsSincePrune += 1
        if sightingsSincePrune >= Self.sightingsPerPrune {
            sightingsSincePrune = 0
            try database.pruneSightings(keeping: Self.maximumSightings, seenBefore: Date() - Self.sightingLifetime)
        }
    }

    private var sightingsSincePrune = 0
    static let sightingsPerPrune = 64
    static let maximumSightings = 4_096
    /// 90 days, in seconds.
    static let sightingLifetime: TimeInterval = 90 * 86_400

    /// The one hex whose id starts with `prefix` (case-insensitive), in `location` or anywhere.
    private func hex(matching prefix: String, in location: HexLocation?) throws -> Hex {
        guard !prefix.isEmpty else { throw ControlError(.usage, "a hex id is needed") }
        let matches = try manager.hexes(idPrefix: prefix, in: location)
        let place = location.map { $0 == .inbox ? "the inbox" : "My Hexlist" } ?? "the inbox or My Hexlist"
        guard let match = matches.first else { throw ControlError(.notFound, "no hex \(prefix) in \(place)") }
        guard matches.count == 1 else { throw ControlError(.notFound, "\(prefix) matches \(matches.count) hexes in \(place); give more of the id") }
        return match
    }
}
