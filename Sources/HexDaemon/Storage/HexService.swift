import HexCarrier
import HexCommandLine
import HexEngine
import HexKit
import HexStore
import Synchronization

/// The daemon's hexes: `HexManager` over the SQLite database, serialised on its own thread.
actor HexService {
    private let executor = DispatchQueueExecutor(label: "hexd.store")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Internal for the extensions that keep other tables (`HexService+Outbox.swift`).
    let database: HexDatabase
    private var manager: HexManager
    nonisolated let identity: LocalIdentity
    /// The keys pinned to peers, as a reader that must not wait for the store (discovery, for
    /// every beacon) keeps them; the store tells it what each write to the pins did.
    nonisolated let pins = PinCache()
    /// The peer UUID this start replaced with the ID the device's key derives, if it did: a data
    /// directory from before IDs were derived from keys.
    nonisolated let replacedUUID: String?

    /// The free space of the data directory's disk, read before each batch of Stores.
    private var disk: DiskWatch
    /// The bytes `disk` keeps in reserve when it holds its reserve file.
    private let reserve: Int
    /// Where the disk's changes (floors crossed, the reserve given back) are said.
    private let logger: Logger
    /// The batch refusals logged per account (once a minute each).
    private var refusalsLogged = KeyedThrottle<SenderAccount>(interval: .seconds(60), capacity: 1_024)

    /// - Parameters:
    ///   - deviceID: the ID the device's key derives; nil when playing a legacy peer.
    ///   - settings: the inbox's budgets and the disk's floors.
    init(
        dataDirectory: DataDirectory, name: String?, deviceID: UUID?, versionID: String,
        accepting acceptPolicy: AcceptPolicy = .anyone, settings: StoreSettings = StoreSettings(),
        logger: Logger
    ) throws {
        self.logger = logger
        reserve = settings.reserve
        disk = DiskWatch(directory: dataDirectory.path, reservePath: dataDirectory.reservePath, settings: settings)
        // Read before the database opens: on a full disk, the reserve goes back to it first.
        let (room, changes) = disk.room()
        database = try HexDatabase(path: dataDirectory.databasePath)
        database.pinsChanged = { [pins] changes in pins.apply(changes) }
        // Two fresh installs would otherwise share one default name, and `--to` could not tell them apart.
        (identity, replacedUUID) = try database.localIdentity(
            name: name, firstName: HostName.current ?? LocalIdentity.defaultName, deviceID: deviceID)
        manager = HexManager(
            repository: database, identity: identity, versionID: versionID, accepting: acceptPolicy,
            knowsDerivedIDs: deviceID != nil)
        manager.budget = settings.budget
        manager.diskRoom = room
        try manager.loadUsage()
        // A checkpoint is a job of its own on this actor, after the one whose commit made it due:
        // the callers of that commit are answered (and their Acks sent) first.
        database.deferCheckpoints { Task { await self.checkpoint() } }
        for change in changes { Self.log(change, to: logger) }
    }

    /// Copies the write-ahead log into the database file. One that fails (the disk, a reader in
    /// the way) leaves the log as it was, to be copied by the next: nothing committed is lost.
    private func checkpoint() {
        try? database.checkpoint()
    }

    /// Acts on envelopes received from a peer, in order; returns each one's outcome once what
    /// they stored is committed.
    ///
    /// Group commit: the envelopes that arrive while the store is busy (from this connection and
    /// others) are acted on together, each in its own savepoint, and committed in one transaction;
    /// each caller is answered (and its Acks sent) only after that commit. An idle store commits
    /// at once. Not isolated to the actor: the caller is resumed from the commit directly, so
    /// that a job queued on the actor meanwhile (a checkpoint) never delays its answer.
    /// - Parameter address: the IP address they came from (a plaintext sender's account).
    /// - Parameter attachedBytes: the bytes of the files that came with a Store's hex, counted
    ///   against the budgets with it (`HexManager.receive`).
    nonisolated func receive(
        _ envelopes: [Envelope], proof: SenderProof, from address: String, attachedBytes: Int = 0
    ) async -> [Result<ReceiveOutcome, any Error>] {
        await withCheckedContinuation { continuation in
            let scheduleCommit = arrivals.withLock { queue in
                queue.waiting.append(
                    Arrival(
                        envelopes: envelopes, proof: proof, address: address, attachedBytes: attachedBytes,
                        continuation: continuation))
                defer { queue.commitScheduled = true }
                return !queue.commitScheduled
            }
            // Runs on this actor after the jobs already waiting for it: what arrives meanwhile joins the batch.
            if scheduleCommit { Task { await self.commitArrivals() } }
        }
    }

    /// Envelopes from one caller waiting for the next group commit.
    private struct Arrival {
        let envelopes: [Envelope]
        let proof: SenderProof
        let address: String
        let attachedBytes: Int
        let continuation: CheckedContinuation<[Result<ReceiveOutcome, any Error>], Never>

        func receive(_ envelope: Envelope, by manager: inout HexManager) throws -> ReceiveOutcome {
            try manager.receive(envelope, proof: proof, from: address, attachedBytes: attachedBytes)
        }
    }

    private struct ArrivalQueue {
        var waiting: [Arrival] = []
        var commitScheduled = false
    }

    private let arrivals = Mutex(ArrivalQueue())
    /// Envelopes past which no further caller joins a transaction.
    static let largestBatch = 256

    private func commitArrivals() {
        let (batch, more) = arrivals.withLock { queue in
            var taken = 0
            var envelopes = 0
            while taken < queue.waiting.count
                && (taken == 0 || envelopes + queue.waiting[taken].envelopes.count <= Self.largestBatch)
            {
                envelopes += queue.waiting[taken].envelopes.count
                taken += 1
            }
            let batch = Array(queue.waiting.prefix(taken))
            queue.waiting.removeFirst(taken)
            queue.commitScheduled = !queue.waiting.isEmpty
            return (batch, queue.commitScheduled)
        }
        if more { Task { self.commitArrivals() } }
        let (room, changes) = disk.room()
        for change in changes { Self.log(change, to: logger) }
        manager.diskRoom = room
        manager.beginBatch()
        var outcomes: [[Result<ReceiveOutcome, any Error>]] = []
        do {
            outcomes = try receiveTogether(batch) ?? receiveEachAlone(batch)
            manager.endBatch()
        } catch {
            // The commit failed: nothing of the batch was stored.
            manager.rollBackBatch()
            if error.isDiskFull, let change = disk.diskFilled() { Self.log(change, to: logger) }
            outcomes = batch.map { arrival in arrival.envelopes.map { _ in .failure(error) } }
        }
        for (arrival, outcome) in zip(batch, outcomes) { arrival.continuation.resume(returning: outcome) }
        logRefusals(in: outcomes)
    }

    /// Acts on a batch in one transaction without a savepoint for each envelope; nil (and
    /// nothing of it kept) when any envelope fails, to be acted on again by `receiveEachAlone`.
    /// The envelopes of a batch nearly always succeed together, and a savepoint costs a copy of
    /// each page its writes change again.
    private func receiveTogether(_ batch: [Arrival]) throws -> [[Result<ReceiveOutcome, any Error>]]? {
        do {
            return try database.allOrNothingTransaction {
                try batch.map { arrival in
                    try arrival.envelopes.map { envelope in
                        do {
                            return .success(try arrival.receive(envelope, by: &manager))
                        } catch {
                            throw EnvelopeFailed()
                        }
                    }
                }
            }
        } catch is EnvelopeFailed {
            // Rolled back whole: what the batch counted is taken back before it is acted on again.
            manager.rollBackBatch()
            manager.beginBatch()
            return nil
        }
    }

    /// An envelope of a batch acted on together failed; the commit itself did not.
    private struct EnvelopeFailed: Error {}

    /// Acts on a batch in one transaction, each envelope in a savepoint of its own: one that
    /// fails (its savepoint rolled back) fails alone.
    private func receiveEachAlone(_ batch: [Arrival]) throws -> [[Result<ReceiveOutcome, any Error>]] {
        try database.transaction {
            batch.map { arrival in
                arrival.envelopes.map { envelope in
                    Result { try arrival.receive(envelope, by: &manager) }
                }
            }
        }
    }

    /// Logs each account refused for room once a minute: a sender past its budget may keep
    /// sending, and the log must not fill the disk in its place.
    private func logRefusals(in outcomes: [[Result<ReceiveOutcome, any Error>]]) {
        for case .success(.noRoom(let refusal, let account)) in outcomes.joined()
        where refusalsLogged.admit(account, at: .now) {
            logger.warning(
                "refused what \(account) sent (a hex or an alert), past \(refusal.summary): "
                    + "nothing stored (said once a minute per sender)",
                [("account", account.rawValue), ("limit", refusal.option)])
        }
    }

    private static func log(_ change: DiskWatch.Change, to logger: Logger) {
        switch change {
        case .refusing(.nothing, let free, _):
            logger.info("the disk has \(ByteCount.text(free)) free again: every Store is taken")
        case .refusing(let refusing, let free, let floor):
            logger.warning(
                "the disk has \(ByteCount.text(free)) free, below \(ByteCount.text(floor)): refusing "
                    + "\(refusing.rawValue) until space returns (hexd --min-free, --min-free-hard)")
        case .reserveReleased(let bytes, let free):
            logger.warning(
                "the disk is full (\(ByteCount.text(free)) free): gave back the \(ByteCount.text(bytes)) "
                    + "reserve so that hexd can go on; it is made again once space returns")
        case .reserveMade(let bytes):
            logger.info("set aside a \(ByteCount.text(bytes)) reserve for a day the disk fills up (--disk-reserve)")
        }
    }

    /// What the inbox holds against its budgets, and the disk against its floors.
    struct StorageSnapshot: Sendable {
        let usage: InboxUsage
        let budget: InboxBudget
        /// The disk's free space and floors; nil when it cannot be read.
        let disk: DiskRoom?
        /// The bytes held in reserve for a full disk; 0 once given back.
        let reserveBytes: Int

        /// Whom the disk's free space refuses now.
        var refusing: DiskWatch.Refusing { disk.map(DiskWatch.Refusing.init) ?? .nothing }
    }

    /// What `status` says of the store, read in one call: the hexes, the outbox, the disk.
    func statusSnapshot() throws -> (counts: HexCounts, outbox: OutboxUsage, storage: StorageSnapshot) {
        (try counts(), try outboxUsage(), storageSnapshot())
    }

    func storageSnapshot() -> StorageSnapshot {
        StorageSnapshot(
            usage: manager.usage, budget: manager.budget, disk: disk.reading(),
            reserveBytes: disk.holdsReserve ? reserve : 0)
    }

    /// The number of this start, and whether it was stored (see `HexDatabase.nextBootNumber`).
    func nextBootNumber() throws -> (number: UInt64, stored: Bool) {
        try database.nextBootNumber()
    }

    /// The visibility kept from the last change (`hexctl visibility`): visible by default.
    func visibility() throws -> Visibility {
        try database.visibility()
    }

    /// Keeps the visibility for the next start.
    func keepVisibility(_ visibility: Visibility) throws {
        try database.keepVisibility(visibility)
    }

    /// Moves a peer's pin, block and outbox to the ID its key derives (see `HexRepository.movePeer`).
    func movePeer(from old: String, to new: String) throws {
        try database.movePeer(from: old, to: new)
        try manager.pairingsChanged()
    }

    /// The key pinned to a peer UUID, if any.
    func pin(forPeer uuid: String) throws -> PeerPin? {
        try database.pin(forPeer: uuid)
    }

    /// The fingerprints of the keys pinned to these peer UUIDs (nil: none), in one call.
    func pinnedKeys(of uuids: Set<String>) throws -> [String: String?] {
        var keys: [String: String?] = [:]
        for uuid in uuids { keys[uuid] = .some(try database.pin(forPeer: uuid)?.fingerprint) }
        return keys
    }

    /// Pins a peer UUID to the key it just proved, unless it has a key already (trust on first
    /// use) or the key belongs to another peer.
    func pinOnFirstUse(peer uuid: String, fingerprint: String) throws {
        guard try database.pin(forPeer: uuid) == nil, try database.pinnedPeer(forKey: fingerprint) == nil else {
            return
        }
        try database.setPin(PeerPin(peerUUID: uuid, fingerprint: fingerprint, trust: .pinned))
    }

    /// The peer UUID a key is pinned to, if any.
    func pinnedPeer(forKey fingerprint: String) throws -> String? {
        try database.pinnedPeer(forKey: fingerprint)
    }

    /// The peer seen before whose ID is `id` (any case), exactly.
    func knownPeer(id: String) throws -> KnownPeer? {
        try writeSightings()
        return try database.knownPeers(uuidPrefix: id).first { $0.uuid == id.uppercased() }
    }

    /// The peer seen before whose name is `text` (any case), or whose UUID starts with it.
    /// - Throws: `LookupError.ambiguousPeer` when several match, or a store error.
    func knownPeer(matching text: String) throws -> KnownPeer? {
        guard !text.isEmpty else { return nil }
        // Sightings still waiting count: a peer found a moment ago may be away already.
        try writeSightings()
        let byName = try database.knownPeers(named: text)
        let matches = byName.isEmpty ? try database.knownPeers(uuidPrefix: text) : byName
        guard matches.count <= 1 else { throw LookupError.ambiguousPeer(text, matches: matches.count) }
        return matches.first
    }

    /// How each of `peers` is trusted here, in one call: the key pinned to it, and the other
    /// pinned or paired peers seen under its name (see `HexDatabase.pinnedNamesakes`), by UUID.
    func trust(of peers: [(uuid: String, name: String)]) throws -> [String: (pin: PeerPin?, namesakes: [String])] {
        try writeSightings()
        var trust: [String: (pin: PeerPin?, namesakes: [String])] = [:]
        for (uuid, name) in peers {
            trust[uuid] = (try database.pin(forPeer: uuid), try database.pinnedNamesakes(of: name, excluding: uuid))
        }
        return trust
    }

    /// Whether a hex of `bytes` from `sender` (with the files that come with it) would be stored
    /// now (`HexManager.admission`).
    func admission(of sender: String, proof: SenderProof, from address: String, bytes: Int) throws
        -> HexManager.Admission
    {
        let (room, changes) = disk.room()
        for change in changes { Self.log(change, to: logger) }
        manager.diskRoom = room
        return try manager.admission(of: sender, proof: proof, from: address, bytes: bytes)
    }

    func isBlocked(senderUUID uuid: String) throws -> Bool {
        try database.isBlocked(senderUUID: uuid)
    }

    /// Pins a peer UUID to a key its user confirmed with a verification code, replacing what
    /// either had.
    func pair(peer uuid: String, fingerprint: String) throws -> PeerPin {
        let pin = PeerPin(peerUUID: uuid, fingerprint: fingerprint, trust: .paired)
        try database.setPin(pin)
        try manager.pairingsChanged()
        return pin
    }

    /// Turns a peer's paired key back into one pinned on first use: it still speaks for the peer.
    /// - Throws: `LookupError.noPin` or `.notPaired`, naming the peer as `label`.
    func unpair(peer uuid: String, label: String) throws -> PeerPin {
        guard var pin = try database.pin(forPeer: uuid) else { throw LookupError.noPin(label) }
        guard pin.trust == .paired else { throw LookupError.notPaired(label) }
        pin.trust = .pinned
        try database.setPin(pin)
        try manager.pairingsChanged()
        return pin
    }

    /// Forgets the key pinned to a peer, so that the next key it proves is pinned (a peer that
    /// was reinstalled). Returns the key forgotten.
    /// - Throws: `LookupError.noPin`, naming the peer as `label`.
    func resetTrust(peer uuid: String, label: String) throws -> PeerPin {
        guard let pin = try database.pin(forPeer: uuid), try database.removePin(forPeer: uuid) else {
            throw LookupError.noPin(label)
        }
        try manager.pairingsChanged()
        return pin
    }

    /// A hex of the user's own, not kept anywhere (a one-off send).
    /// - Throws: `HexManagerError.invalidColor`.
    nonisolated func ownHex(description: String, color: String, links: [Link]) throws -> Hex {
        try HexManager.ownHex(description: description, color: color, links: links, from: identity)
    }

    /// The My Hexlist hex to send, by id or unique id prefix.
    func hexToSend(_ prefix: String) throws -> Hex {
        try hex(matching: prefix, in: .myHexlist)
    }

    /// Counted by the database, from an index, without loading a hex.
    func counts() throws -> HexCounts {
        try manager.counts()
    }

    /// One page of a location's list (see `HexManager.summaries`).
    /// - Throws: `HexManagerError.hexNotFound` when `cursor` is not a hex of the location.
    func summaries(in location: HexLocation, after cursor: UUID?, limit: Int, fieldCharacters: Int) throws
        -> [HexSummary]
    {
        try manager.summaries(in: location, after: cursor, limit: limit, fieldCharacters: fieldCharacters)
    }

    func show(_ prefix: String) throws -> Hex { try hex(matching: prefix, in: nil) }

    /// The hex, as the user reads it: shown as it was (`isChecked` false the first time), and
    /// checked (seen) from then on.
    func read(_ prefix: String) throws -> Hex {
        let hex = try hex(matching: prefix, in: nil)
        if hex.location == .inbox, !hex.isChecked { try manager.markChecked(id: hex.id) }
        return hex
    }

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

    /// - Throws: `HexManagerError.invalidColor`.
    func createHex(description: String, color: String, links: [Link]) throws -> Hex {
        try manager.createHex(description: description, color: color, links: links)
    }

    func move(_ prefix: String, to index: Int) throws -> Hex {
        let hex = try hex(matching: prefix, in: .myHexlist)
        try manager.moveInHexlist(id: hex.id, to: index)
        return hex
    }

    func setBlocked(_ blocked: Bool, senderUUID: String) throws -> [String] {
        if blocked { try manager.block(senderUUID: senderUUID) } else { try manager.unblock(senderUUID: senderUUID) }
        return try blockedSenders()
    }

    /// The blocked senders' IDs, each in its kind's spelling (the store keeps them in upper case), in order.
    func blockedSenders() throws -> [String] { try manager.blockedSenders().map { $0.canonicalPeerID ?? $0 }.sorted() }

    /// One page of the kept Alerts, newest first.
    /// - Throws: `HexManagerError.alertNotFound` when `cursor` is not a kept Alert.
    func alerts(after cursor: UUID?, limit: Int) throws -> [ReceivedAlert] {
        try manager.alerts(after: cursor, limit: limit)
    }

    /// Deletes the kept Alert whose id starts with `prefix` (any case); returns it.
    /// - Throws: `LookupError` when none or several match.
    func deleteAlert(_ prefix: String) throws -> ReceivedAlert {
        let matches = prefix.isEmpty ? [] : try manager.alertIDs(idPrefix: prefix, limit: 2)
        guard let id = matches.first else { throw LookupError.noAlert(prefix) }
        guard matches.count == 1 else { throw LookupError.ambiguousAlert(prefix) }
        return try manager.deleteAlert(id: id)
    }

    /// Remembers peers seen. Sightings are written `sightingsPerPrune` at a time, or within
    /// `sightingDelay` of the first one waiting, in one commit that also forgets the oldest beyond
    /// `maximumSightings` and those older than `sightingLifetime`: every commit is synced to disk,
    /// and a flood of invented peers must not cost a sync each.
    func recordSightings(_ seen: [SeenPeer]) throws {
        let wasWaiting = !pendingSightings.isEmpty
        for peer in seen {
            pendingSightings[peer.uuid] = peer
            if pendingSightings.count >= Self.sightingsPerPrune { try writeSightings() }
        }
        guard !wasWaiting, !pendingSightings.isEmpty else { return }
        Task {
            try? await Task.sleep(for: Self.sightingDelay)
            // A store that cannot write now loses these sightings only: they are a memory of
            // peers for naming them later, written again when each peer is next found.
            try? self.writeSightings()
        }
    }

    /// Writes the sightings waiting, and prunes, in one commit (also when the daemon stops).
    func writeSightings() throws {
        guard !pendingSightings.isEmpty else { return }
        let sightings = pendingSightings
        pendingSightings = [:]
        try database.transaction {
            for (uuid, sighting) in sightings {
                try database.recordSighting(
                    uuid: uuid, name: sighting.name, versionID: sighting.versionID,
                    address: sighting.address, at: sighting.time)
            }
            try database.pruneSightings(keeping: Self.maximumSightings, seenBefore: Date() - Self.sightingLifetime)
        }
    }

    /// A peer seen, to remember for naming it later: where, under which name and version, when.
    struct SeenPeer: Sendable {
        var uuid: String
        var name: String
        var versionID: String
        var address: String
        var time = Date()
    }

    /// At most `sightingsPerPrune` (one per peer).
    private var pendingSightings: [String: SeenPeer] = [:]
    static let sightingDelay = Duration.seconds(1)
    static let sightingsPerPrune = 64
    static let maximumSightings = 4_096
    /// 90 days, in seconds.
    static let sightingLifetime: TimeInterval = 90 * 86_400

    /// The one hex whose id starts with `prefix` (case-insensitive), in `location` or anywhere.
    /// - Throws: `LookupError` when none or several match.
    private func hex(matching prefix: String, in location: HexLocation?) throws -> Hex {
        let place = location.map { $0 == .inbox ? "the inbox" : "My Hexlist" } ?? "the inbox or My Hexlist"
        // An empty prefix would match every hex.
        guard !prefix.isEmpty else { throw LookupError.noHex(prefix, place: place) }
        let matches = try manager.hexIDs(idPrefix: prefix, in: location, limit: LookupError.matchesCounted)
        guard let match = matches.first else { throw LookupError.noHex(prefix, place: place) }
        guard matches.count == 1 else { throw LookupError.ambiguousHex(prefix, matches: matches.count, place: place) }
        // Only the one hex is loaded with its links.
        return try manager.hex(id: match)
    }
}
