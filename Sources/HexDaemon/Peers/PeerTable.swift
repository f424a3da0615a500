import HexCarrier
import HexEngine
import HexKit
import HexNet

/// The peers seen, keyed by peer UUID (never by name or address): one entry per peer, whatever
/// families, interfaces and sources it is seen on. Pure bookkeeping: the peer directory feeds it
/// sightings and the clock.
///
/// It holds at most `capacity` peers: a new one past it takes the place of the peer unheard
/// longest, choosing among strangers before peers hexes were exchanged with, so a flood of
/// invented peers cannot grow the table nor push out the peers in use.
struct PeerTable {
    struct Peer: Sendable, Equatable {
        var uuid: String
        var name: String
        var versionID: String
        var instance: String
        /// Every address it was heard from, most recent first.
        var addresses: [IPAddress]
        var port: UInt16
        var interval: Duration
        var capabilities: [String]
        /// The certificate fingerprint it announced (a claim; a TLS handshake proves it).
        var fingerprint: String?
        var lastSeen: ContinuousClock.Instant
        /// When it was first heard from, this time in the table.
        var firstSeen: ContinuousClock.Instant
        /// A hex went to it or came from it: it is kept over strangers when the table is full.
        var hasExchanged = false
        /// Its beacons are signed by the key its UUID derives from (a current peer); false for a
        /// legacy peer, whose UUID is only a claim.
        var isSigned = false
        /// The address where a TLS handshake last proved its key: tried first.
        var provenAddress: IPAddress?
        /// Signature checks of beacons claiming it: a forger cannot spend more than these.
        var checks = TokenBucket(rate: PeerTable.checksPerPeer, burst: PeerTable.checksPerPeer * 2)

        /// Where its envelopes go first.
        var endpoint: Endpoint { endpoints[0] }

        /// Where its envelopes may go, in the order to try: the address that last proved its key,
        /// then every address it was heard from, the latest first. Any of them may be a replay's
        /// source: a send proves the key before it writes, so a wrong one costs one dial.
        var endpoints: [Endpoint] {
            let others = addresses.filter { $0 != provenAddress }
            let ordered = (provenAddress.map { [$0] } ?? []) + others
            let hosts = ordered.isEmpty ? [IPAddress.anyV4] : ordered
            return hosts.map { Endpoint($0, port: port) }
        }
        var isLegacy: Bool { HexdVersion.isLegacy(versionID) }
        /// When it expires unless seen again: three of its own intervals after it was last seen.
        var expiresAt: ContinuousClock.Instant { lastSeen + interval * 3 }
        /// It takes TLS on its TCP port, and said which key it will prove: a certificate, or (found by
        /// DNS-SD, which signs nothing) the ID any key it proves must derive.
        var speaksTLS: Bool { capabilities.contains("tls") && (fingerprint != nil || uuid.isKeyDerivedID) }
    }

    /// A beacon that claimed the UUID of a peer whose key is pinned, announcing another key or
    /// none. It is shown to the user, and never used for sending.
    struct Impostor: Sendable, Equatable {
        var uuid: String
        var name: String
        var versionID: String
        var endpoint: Endpoint
        /// The key it announced; nil when it announced none (a claim of speaking plaintext).
        var fingerprint: String?
        /// The key pinned to the UUID it claimed.
        var pinned: String
        var lastSeen: ContinuousClock.Instant
        var interval: Duration
    }

    /// What a beacon changed.
    enum Change: Equatable {
        /// A new peer; the table being full, `evicting` made room for it.
        case found(Peer, evicting: Peer?)
        /// Same peer UUID, new instance: the daemon restarted.
        case restarted(Peer)
        case updated(Peer)
        case left(Peer)
        /// A beacon claimed a pinned UUID with another key, for the first time from this address
        /// with this key. The peer's own entry, if any, is left as it was.
        case keyMismatch(Impostor)
        /// Our own beacon, or a `bye` for a peer not in the table or from an address it does not use.
        case none
    }

    /// Our own UUID: beacons carrying it are our own, heard back (ghost peers).
    let ownUUID: String
    let capacity: Int
    private(set) var peers: [String: Peer] = [:]
    /// The latest impostor for each pinned UUID, at most `maximumImpostors`.
    private(set) var impostors: [String: Impostor] = [:]
    static let maximumImpostors = 64

    init(ownUUID: String, capacity: Int = 1_024) {
        self.ownUUID = ownUUID.uppercased()
        self.capacity = max(capacity, 1)
    }

    /// - Parameter pinnedKey: the key pinned to the sighting's UUID, if any. A sighting announcing
    ///   another key (or none, which would mean plaintext) does not touch the peer's entry: it is
    ///   kept apart as an impostor, so a replayed or forged beacon never redirects a send.
    ///
    /// An unsigned sighting (`Sighting.isSigned`) is a claim: a legacy peer's, whose key and TLS are
    /// not taken, or one found by DNS-SD with a key-derived ID, which keeps its TLS (the handshake
    /// must prove a key that derives the ID). About a peer whose beacons are signed, a claim only
    /// adds the address it came from as a candidate: it cannot rename, re-key or keep alive.
    mutating func observe(_ sighting: Sighting, at now: ContinuousClock.Instant, pinnedKey: String? = nil) -> Change {
        let uuid = sighting.uuid.uppercased()
        let address = sighting.address
        guard uuid != ownUUID else { return .none }
        if sighting.kind == .leaving {
            // A signed `bye` is the peer's own. Anyone can send an unsigned one naming any peer:
            // it counts only for a legacy peer, and from an address that peer was heard from.
            guard let known = peers[uuid] else { return .none }
            guard sighting.isSigned || (!known.isSigned && known.addresses.contains(address)) else { return .none }
            return peers.removeValue(forKey: uuid).map(Change.left) ?? .none
        }
        // A claim that names no key under a key-derived ID (DNS-SD) claims no other key: the
        // handshake proves the pinned one.
        let claimsKey = sighting.fingerprint != nil || sighting.isSigned || !uuid.isKeyDerivedID
        if let pinnedKey, claimsKey, sighting.fingerprint != pinnedKey {
            return observeImpostor(sighting, uuid: uuid, at: now, pinnedKey: pinnedKey)
        }
        let signed = sighting.isSigned
        if !signed, peers[uuid]?.isSigned == true {
            heardAgain(uuid, from: address)
            return .none
        }
        let keepsTLS = signed || uuid.isKeyDerivedID
        var peer = Peer(
            uuid: uuid, name: sighting.name, versionID: sighting.versionID, instance: sighting.instance,
            addresses: [address], port: sighting.port, interval: sighting.interval,
            capabilities: keepsTLS ? sighting.capabilities : sighting.capabilities.filter { $0 != "tls" },
            fingerprint: signed ? sighting.fingerprint : nil, lastSeen: now, firstSeen: now, isSigned: signed)
        guard let known = peers[uuid] else {
            let evicted = peers.count >= capacity ? evictOne() : nil
            peers[uuid] = peer
            return .found(peer, evicting: evicted)
        }
        // A few addresses are plenty (a host on wired and wireless, over both families); more is a
        // peer being spoofed.
        peer.addresses += known.addresses.filter { $0 != address }.prefix(Self.maximumAddresses - 1)
        peer.hasExchanged = known.hasExchanged
        peer.provenAddress = known.provenAddress
        peer.firstSeen = known.firstSeen
        peer.checks = known.checks
        peers[uuid] = peer
        return known.instance == peer.instance ? .updated(peer) : .restarted(peer)
    }

    static let maximumAddresses = 4

    private mutating func observeImpostor(
        _ sighting: Sighting, uuid: String, at now: ContinuousClock.Instant, pinnedKey: String
    ) -> Change {
        let impostor = Impostor(
            uuid: uuid, name: sighting.name, versionID: sighting.versionID,
            endpoint: Endpoint(sighting.address, port: sighting.port), fingerprint: sighting.fingerprint,
            pinned: pinnedKey, lastSeen: now, interval: sighting.interval)
        let known = impostors[uuid]
        if known == nil, impostors.count >= Self.maximumImpostors,
            let stalest = impostors.values.min(by: { $0.lastSeen < $1.lastSeen })
        {
            impostors[stalest.uuid] = nil
        }
        impostors[uuid] = impostor
        let isNews = known.map { $0.endpoint != impostor.endpoint || $0.fingerprint != impostor.fingerprint } ?? true
        return isNews ? .keyMismatch(impostor) : .none
    }

    /// Adds `address` to a peer's candidates, after those it has: its latest signed beacon was
    /// heard again from there (another path to it, or a host replaying it).
    mutating func heardAgain(_ uuid: String, from address: IPAddress) {
        guard var peer = peers[uuid.uppercased()], !peer.addresses.contains(address) else { return }
        peer.addresses = Array((peer.addresses + [address]).prefix(Self.maximumAddresses))
        peers[peer.uuid] = peer
    }

    /// Signature checks a second for the beacons claiming one peer in the table (bursts of twice
    /// as many): twice what the shortest interval (0.1 s) needs.
    static let checksPerPeer = 20.0

    /// Whether a beacon claiming the peer `uuid` may have its signature checked now (and if so,
    /// it is counted); nil when the peer is not in the table.
    mutating func admitCheck(of uuid: String, at now: ContinuousClock.Instant) -> Bool? {
        guard var peer = peers[uuid] else { return nil }
        let admitted = peer.checks.take(at: now)
        peers[uuid] = peer
        return admitted
    }

    /// Notes where a TLS handshake just proved the peer's key: sends try that address first.
    mutating func markProven(_ uuid: String, at address: IPAddress) {
        peers[uuid.uppercased()]?.provenAddress = address
    }

    /// Forgets what impostors claimed a UUID: its key was just re-pinned or reset.
    mutating func forgetImpostor(_ uuid: String) {
        impostors[uuid.uppercased()] = nil
    }

    /// Notes that a hex went to or came from the peer with this UUID, if it is in the table.
    mutating func markExchanged(_ uuid: String) {
        peers[uuid.uppercased()]?.hasExchanged = true
    }

    /// Removes the peer unheard longest, strangers first.
    private mutating func evictOne() -> Peer? {
        let victim = peers.values.min {
            ($0.hasExchanged ? 1 : 0, $0.lastSeen) < ($1.hasExchanged ? 1 : 0, $1.lastSeen)
        }
        return victim.flatMap { peers.removeValue(forKey: $0.uuid) }
    }

    /// When the next peer is due to expire, if there is any peer. Reads the whole table: asked
    /// when a timer fires, not for each sighting.
    var nextExpiry: ContinuousClock.Instant? {
        peers.values.lazy.map(\.expiresAt).min()
    }

    /// Removes and returns the peers not heard from for three of their own intervals.
    mutating func expire(at now: ContinuousClock.Instant) -> [Peer] {
        let expired = peers.values.filter { $0.expiresAt <= now }
        for peer in expired { peers[peer.uuid] = nil }
        impostors = impostors.filter { now - $0.value.lastSeen < $0.value.interval * 3 }
        return expired
    }

    /// The peer a user means by `text`: its exact name (ignoring case), or its UUID or a unique
    /// prefix of it.
    func peer(matching text: String) throws(LookupError) -> Peer {
        let byName = peers.values.filter { $0.name.lowercased() == text.lowercased() }
        if byName.count == 1, let peer = byName.first { return peer }
        if byName.count > 1 { throw .ambiguousPeer(text, matches: byName.count) }
        let byUUID = text.isEmpty ? [] : peers.values.filter { $0.uuid.hasPrefix(text.uppercased()) }
        if byUUID.count > 1 { throw .ambiguousPeer(text, matches: byUUID.count) }
        guard let peer = byUUID.first else { throw .noPeer(text) }
        return peer
    }
}
