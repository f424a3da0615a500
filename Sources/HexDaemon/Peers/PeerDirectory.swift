import HexCarrier
import HexKit
import HexNet

/// The one place that knows which peers are on the network: every discovery source hands it
/// `Sighting`s, and senders, pairing, the outbox, the envelope server and `status` ask it.
///
/// It keeps the `PeerTable`, checks each sighting against the key pinned to its UUID, expires
/// silent peers at their own deadlines (a directory without peers arms no timer), remembers the
/// peers seen for the next start, and says what changed: in the log, in the event log, and to
/// whoever follows `arrivals()`.
actor PeerDirectory {
    private var table: PeerTable
    private let service: HexService
    private let events: EventLog
    private let logger: Logger
    /// The armed expiry timer and its deadline.
    private var expiry: (deadline: ContinuousClock.Instant, timer: Task<Void, Never>)?
    /// How late an expiry may be, so that the system can serve it with another wake-up.
    private static let expiryTolerance: Duration = .milliseconds(200)
    /// Those following `arrivals()`.
    private var followers: [UInt64: AsyncStream<String>.Continuation] = [:]
    private var nextFollower: UInt64 = 0
    /// Peers pushed out of the full table by newcomers.
    private(set) var peersEvicted = 0

    init(ownUUID: String, capacity: Int, service: HexService, events: EventLog, logger: Logger) {
        table = PeerTable(ownUUID: ownUUID, capacity: capacity)
        self.service = service
        self.events = events
        self.logger = logger
    }

    // MARK: Sightings

    /// Takes sightings in the order given and says what each changed: a peer found, restarted or
    /// gone is logged and published (and a new one remembered in the store), a claim on a pinned
    /// UUID with another key is kept apart as an impostor and reported. The keys pinned to their
    /// peers that are not known yet are read from the store in one call, which this waits for.
    @discardableResult
    func observe(_ sightings: [Sighting]) async -> [PeerTable.Change] {
        let pinned = await pinnedKeys(of: sightings.filter { $0.kind != .leaving }.map(\.uuid))
        var changes: [PeerTable.Change] = []
        for sighting in sightings {
            let key = sighting.kind == .leaving ? nil : pinned[sighting.uuid] ?? nil
            changes.append(await take(sighting, pinnedKey: key))
        }
        return changes
    }

    /// Takes a sighting as `observe` does, without waiting for the store: at once when the key
    /// pinned to its peer is known (`HexService.pins`: a peer seen before whose pin has not changed
    /// since, or one leaving), else once that key is read, with every other sighting that waits so,
    /// a batch at a time. Every discovery source offers its sightings here: a store busy with a
    /// commit must hold neither the other peers' sightings nor, in discovery's loop, this daemon's
    /// own beacons. A peer's sightings are taken, and `taken` told of them, in the order offered.
    /// - Parameter taken: told what the sighting changed, once it is taken.
    /// - Returns: false when it was dropped: `unpinnedLimit` sightings wait already.
    func offer(_ sighting: Sighting, taken: Taken? = nil) async -> Bool {
        if unpinnedWaiting[sighting.uuid] == nil,
            let pinned = sighting.kind == .leaving ? .some(nil) : service.pins.key(of: sighting.uuid)
        {
            let change = await take(sighting, pinnedKey: pinned)
            await taken?(change)
            return true
        }
        guard unpinned.count < Self.unpinnedLimit else { return false }
        unpinned.append((sighting, taken))
        unpinnedWaiting[sighting.uuid, default: 0] += 1
        if unpinnedTaker == nil { unpinnedTaker = Task { [weak self] in await self?.takeUnpinned() } }
        return true
    }

    /// What a sighting offered changed, for the source that offered it.
    typealias Taken = @Sendable (PeerTable.Change) async -> Void

    /// Takes the sightings that wait for their peers' pinned keys, all that wait at a time, until
    /// none does; then ends the taker (nothing is left between the last look and the end). A peer
    /// counts as waiting until its source is told: its next sighting is told after this one.
    private func takeUnpinned() async {
        while !unpinned.isEmpty {
            let batch = unpinned
            unpinned = []
            let changes = await observe(batch.map(\.sighting))
            for (offered, change) in zip(batch, changes) { await offered.taken?(change) }
            for uuid in batch.map(\.sighting.uuid) {
                let left = (unpinnedWaiting[uuid] ?? 1) - 1
                unpinnedWaiting[uuid] = left > 0 ? left : nil
            }
        }
        unpinnedTaker = nil
    }

    /// Sightings whose peers' pinned keys are read from the store before they are taken, in the
    /// order offered: at most `unpinnedLimit`.
    private var unpinned: [(sighting: Sighting, taken: Taken?)] = []
    /// How many sightings of each peer wait there, or are being taken.
    private var unpinnedWaiting: [String: Int] = [:]
    private var unpinnedTaker: Task<Void, Never>?
    static let unpinnedLimit = 1_024

    /// Takes a sighting into the table, its peer's pinned key read, and says what changed. Waits
    /// for the event log only, never for the store.
    private func take(_ sighting: Sighting, pinnedKey pinned: String?) async -> PeerTable.Change {
        let change = table.observe(sighting, at: .now, pinnedKey: pinned)
        // A sighting moves its own peer's deadline only: the others' stand.
        if let peer = table.peers[sighting.uuid] { armExpiry(atMost: peer.expiresAt) }
        switch change {
        case .found(let peer, let evicted):
            if let evicted { await dropped(evicted) }
            await arrived(peer, verb: "found")
        case .restarted(let peer):
            await arrived(peer, verb: "restarted")
        case .left(let peer):
            logger.info("peer left: \(peer.name) (\(peer.uuid))")
            await events.publish(
                .peerLost, peerUUID: peer.uuid, peer: peer.name, versionID: peer.versionID,
                message: "said bye")
        case .keyMismatch(let impostor):
            let claim =
                "\(impostor.endpoint) claims to be \(impostor.name) (\(impostor.uuid)) with "
                + (impostor.fingerprint.map { "the key \($0)" } ?? "no key")
                + ", but its key is pinned to \(impostor.pinned); sends go only to the pinned key"
            logger.limited("peer key mismatch", .warning, claim)
            await events.publish(
                .peerKeyMismatch, peerUUID: impostor.uuid, peer: impostor.name,
                versionID: impostor.versionID, message: claim)
        case .updated, .none:
            break
        }
        return change
    }

    /// Says that `peer` is (back) on the network, remembers it for the next start and tells the
    /// followers of `arrivals()`.
    private func arrived(_ peer: PeerTable.Peer, verb: String) async {
        logger.limited(
            "peer found", .info,
            "peer \(verb): \(peer.name) (\(peer.uuid)) version \(peer.versionID) at \(peer.endpoint)")
        await events.publish(
            .peerFound, peerUUID: peer.uuid, peer: peer.name, versionID: peer.versionID,
            message: peer.endpoint.description)
        remember(
            HexService.SeenPeer(
                uuid: peer.uuid, name: peer.name, versionID: peer.versionID, address: peer.endpoint.description))
        for follower in followers.values { follower.yield(peer.uuid) }
    }

    /// Says that a device another carrier lists (a LocalSend device, `id` its ID) is there now:
    /// it is remembered for naming it later, and the followers of `arrivals()` make its queued
    /// sends due. That carrier logs and publishes the finding itself.
    func arrivedElsewhere(id: String, name: String, versionID: String, address: String) {
        remember(HexService.SeenPeer(uuid: id, name: name, versionID: versionID, address: address))
        heardFromElsewhere(id: id)
    }

    /// Says that a device another carrier lists is back (it announced itself again, and proved
    /// it): the followers of `arrivals()` make its queued sends due.
    func heardFromElsewhere(id: String) {
        for follower in followers.values { follower.yield(id) }
    }

    /// Says that the full table dropped `peer` for a newcomer.
    private func dropped(_ peer: PeerTable.Peer) async {
        peersEvicted += 1
        logger.limited(
            "peer table full", .warning,
            "the peer table is full (\(table.capacity)): "
                + "dropped \(peer.name) (\(peer.uuid)), unheard longest")
        await events.publish(
            .peerLost, peerUUID: peer.uuid, peer: peer.name, versionID: peer.versionID,
            message: "dropped: the peer table is full")
    }

    /// The IDs of peers as they are found or restart, and of other carriers' devices as they are
    /// found or come back, from now on: the outbox makes their queued sends due. A follower that
    /// falls behind loses the oldest (it reads the store anyway).
    func arrivals() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(256))
        let id = nextFollower
        nextFollower += 1
        followers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unfollow(id) } }
        return stream
    }

    private func unfollow(_ id: UInt64) {
        followers[id] = nil
    }

    /// Whether a sighting claiming the peer `uuid` may have its signature checked now (and if so,
    /// it is counted against that peer's budget); nil when the peer is not in the directory.
    func admitCheck(of uuid: String) -> Bool? {
        table.admitCheck(of: uuid.uppercased(), at: .now)
    }

    /// Adds `address` to a peer's candidates: its latest signed beacon was heard again from there.
    func heardAgain(_ uuid: String, from address: IPAddress) {
        table.heardAgain(uuid, from: address)
    }

    // MARK: What senders learn

    /// Notes that a hex went to or came from these peers: they are kept over strangers when the
    /// table is full.
    func markExchanged(_ uuids: [String]) {
        for uuid in uuids { table.markExchanged(uuid) }
    }

    /// Notes a delivery to the peer `uuid`, in one call: it was exchanged with, and, when a TLS
    /// handshake proved its key at `address`, sends try that address first.
    func recordDelivery(to uuid: String, provenAt address: IPAddress?) {
        table.markExchanged(uuid)
        if let address { table.markProven(uuid, at: address) }
    }

    /// Forgets the impostors of a UUID whose key was just reset or paired.
    func forgetImpostor(_ uuid: String) {
        table.forgetImpostor(uuid)
    }

    // MARK: Questions

    /// Every peer, by name.
    var peers: [PeerTable.Peer] { table.peers.values.sorted { $0.name.lowercased() < $1.name.lowercased() } }

    var count: Int { table.peers.count }

    /// The peers in the table and those pushed out since the start, read in one call.
    var census: (count: Int, evicted: Int) { (table.peers.count, peersEvicted) }

    /// The peer a user means by `text` (`PeerTable.peer(matching:)`).
    func peer(matching text: String) throws(LookupError) -> PeerTable.Peer {
        try table.peer(matching: text)
    }

    /// The peer with this UUID (any case), if it is there.
    func peer(uuid: String) -> PeerTable.Peer? {
        table.peers[uuid.uppercased()]
    }

    /// The peer seen at `endpoint`, if any.
    func peer(at endpoint: Endpoint) -> PeerTable.Peer? {
        table.peers.values.first { $0.port == endpoint.port && $0.addresses.contains { $0 == endpoint.address } }
    }

    /// Claims on pinned UUIDs with another key, seen within three of their intervals.
    var impostors: [PeerTable.Impostor] { table.impostors.values.sorted { $0.uuid < $1.uuid } }

    // MARK: Expiry

    /// Arms the expiry timer for `next` (three of a peer's intervals after it was last seen)
    /// unless one is armed for it or sooner. A timer that fires early (the peer was seen again
    /// meanwhile) expires nothing and is armed again for the table's next deadline.
    private func armExpiry(atMost next: ContinuousClock.Instant) {
        if let armed = expiry, armed.deadline <= next { return }
        expiry?.timer.cancel()
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(until: next, tolerance: Self.expiryTolerance, clock: .continuous)) != nil
            else { return }
            await self?.expireDue()
        }
        expiry = (next, timer)
    }

    private func expireDue() async {
        expiry = nil
        for peer in table.expire(at: .now) {
            logger.info("peer lost: \(peer.name) (\(peer.uuid)), silent for three intervals")
            await events.publish(.peerLost, peerUUID: peer.uuid, peer: peer.name, versionID: peer.versionID)
        }
        if let next = table.nextExpiry { armExpiry(atMost: next) }
    }

    // MARK: Remembering

    /// Hands `seen` to the store to remember, without waiting for it: one task carries what is
    /// waiting over, so that a sighting never waits for the store's thread. At most
    /// `sightingsWaitingLimit` peers wait; past that a newcomer is not remembered (it is, when it
    /// is next found).
    private func remember(_ seen: HexService.SeenPeer) {
        guard sightingsWaiting[seen.uuid] != nil || sightingsWaiting.count < Self.sightingsWaitingLimit else {
            logger.limited(
                "peers to remember", .warning,
                "the store is behind: \(seen.name) (\(seen.uuid)) is not remembered for naming it after a restart")
            return
        }
        sightingsWaiting[seen.uuid] = seen
        guard sightingsCarrier == nil else { return }
        sightingsCarrier = Task { [weak self] in await self?.carryWaiting() }
    }

    /// Returns once every sighting offered is taken and every peer found is carried over to the
    /// store: when the daemon stops, before the store writes what it holds.
    func carrySightingsOver() async {
        while unpinnedTaker != nil || sightingsCarrier != nil {
            await unpinnedTaker?.value
            await sightingsCarrier?.value
        }
    }

    /// Hands the store what waits until nothing does, then ends the carrier (with nothing left
    /// between the last look and the end, a sighting never waits without one).
    private func carryWaiting() async {
        while !sightingsWaiting.isEmpty {
            // At most one commit's worth a hop: the store's thread is not held for a flood's worth.
            let batch = Array(sightingsWaiting.values.prefix(HexService.sightingsPerPrune))
            for seen in batch { sightingsWaiting[seen.uuid] = nil }
            do {
                try await service.recordSightings(batch)
            } catch {
                logger.warning("cannot remember \(batch.count) peers seen: \(error)")
            }
        }
        sightingsCarrier = nil
    }

    /// Peers found, by ID, that the store is not handed yet.
    private var sightingsWaiting: [String: HexService.SeenPeer] = [:]
    private var sightingsCarrier: Task<Void, Never>?
    static let sightingsWaitingLimit = 4_096

    // MARK: Pins

    /// The keys pinned to `uuids` (nil: none), those not known yet (`HexService.pins`) read from the
    /// store in one call. A store that cannot be read counts as no pin here: the send path reads the
    /// pin again, and refuses what does not prove it.
    private func pinnedKeys(of uuids: [String]) async -> [String: String?] {
        var keys: [String: String?] = [:]
        var unknown: Set<String> = []
        for uuid in uuids {
            if let known = service.pins.key(of: uuid) { keys[uuid] = known } else { unknown.insert(uuid) }
        }
        guard !unknown.isEmpty else { return keys }
        let generation = service.pins.generation
        do {
            let read = try await service.pinnedKeys(of: unknown)
            service.pins.keep(read, readAt: generation) { table.peers[$0] != nil }
            keys.merge(read) { $1 }
        } catch {
            logger.limited(
                "pin lookup", .warning,
                "cannot read the keys pinned to \(unknown.count) peers, \(unknown.first?.clipped(toUTF8: 40) ?? "") "
                    + "among them: \(error)")
        }
        return keys
    }
}
