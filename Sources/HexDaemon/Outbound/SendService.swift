import HexCarrier
import HexCommandLine
import HexEngine
import HexKit
import HexNet
import HexTLS

/// Delivers envelopes to peers: finds where the destination is now, writes the envelope in the
/// dialect the peer understands over the connection its key calls for, and waits for its answer.
/// The outbox decides when, and what an outcome means.
struct SendService: Sendable {
    let wire: WireSettings
    /// This device's TLS; nil when playing a legacy peer.
    let tls: TLSContext?
    let directory: PeerDirectory
    /// The store, for the keys pinned to peers and the peers seen before.
    let service: HexService
    let logger: Logger
    /// TLS connections kept open between sends to the same peer.
    let pool: ConnectionPool
    /// Learns where known peers are: a delivery that proved a key.
    let gate: HandshakeGate
    /// hexd as a LocalSend device and as a KDE Connect device, which send to those devices.
    let carriers: ForeignCarriers

    /// Where a send goes: a peer by its UUID, sent to wherever it announces itself, or an address
    /// the user typed, which the send stays at.
    struct Target: Sendable, Equatable {
        var peerUUID: String?
        var address: Endpoint?
        /// The destination as the user reads it.
        var label: String
        /// The peer as the lookup found it in the table, so that the route of the first attempt
        /// does not ask the directory again; nil for a later attempt, which finds it afresh.
        var found: PeerTable.Peer?
    }

    /// A send the peer took.
    struct Receipt: Sendable {
        /// The peer as the user reads it: its name and endpoint, or the endpoint alone.
        var peer: String
        /// The envelope's id; nil when sent to a legacy peer.
        var messageID: String?
        var delivery: EnvelopeDelivery
        /// What the delivery proved of the peer's key that the store does not hold yet.
        var keyProof: HexService.KeyProof?
    }

    /// The target `text` names: `HOST:PORT`; a peer in the table by name, UUID or unique UUID
    /// prefix; else a peer seen before (by name or UUID prefix, as remembered) or a pinned peer's
    /// full UUID: it may be away for now, and the send waits for it.
    /// - Throws: `LookupError` when `text` names no peer, or a store error.
    func target(_ text: String) async throws -> Target {
        if let written = Endpoint.bracketed(text, defaultPort: DefaultPorts.envelopes) {
            throw LookupError.unbracketed(text, write: written)
        }
        if let address = Endpoint(parsing: text) {
            let peer = await directory.peer(at: address)
            let label = peer.map { "\($0.name) (\(address))" } ?? address.description
            return Target(peerUUID: nil, address: address, label: label, found: peer)
        }
        if let listed = try await listed(text) { return listed }
        if let seen = try await service.knownPeer(matching: text) {
            // The store keeps IDs in upper case; a device's of another kind has its own spelling.
            return Target(peerUUID: seen.uuid.canonicalPeerID ?? seen.uuid, address: nil, label: seen.name)
        }
        // A device's full ID, of a carrier not off: what its device proves whenever it is back (a
        // LocalSend device's fingerprint; a KDE Connect device's certificate, once paired).
        if let id = text.canonicalPeerID, carriers.entries.contains(where: { $0.kind.owns(id) && $0.takesIDs }) {
            return Target(peerUUID: id, address: nil, label: id)
        }
        guard let uuid = text.canonicalUUID, try await service.pin(forPeer: uuid) != nil else {
            throw LookupError.noPeer(text)
        }
        return Target(peerUUID: uuid, address: nil, label: uuid)
    }

    /// The peer in the table, or the device a carrier lists, that `text` names (its name, its ID or
    /// a unique prefix of it); nil when none does.
    /// - Throws: `LookupError` when `text` is ambiguous: it matches several peers, or devices of
    ///   two kinds go by that name.
    func listed(_ text: String) async throws(LookupError) -> Target? {
        var found: [(target: Target, namesake: Namesake)] = []
        do {
            let peer = try await directory.peer(matching: text)
            found.append(
                (Target(peerUUID: peer.uuid, address: nil, label: peer.name, found: peer), .hexdPeer(peer.uuid)))
        } catch {
            guard case .noPeer = error else { throw error }
        }
        for carrier in carriers.up {
            if let device = await carrier.target(named: text) {
                found.append(
                    (
                        Target(peerUUID: device.peerID, address: nil, label: device.label),
                        .device(of: type(of: carrier).name, device.peerID)
                    ))
            }
        }
        guard found.count <= 1 else { throw .twoKinds(text, found[0].namesake, found[1].namesake) }
        return found.first?.target
    }

    /// How long one attempt at a send to `peerID` may take when its caller would wait `asked`: as
    /// its carrier says for a device (a LocalSend device's person may take minutes to answer).
    func attemptTimeout(toPeer peerID: String?, asked: Duration) -> Duration {
        carrier(of: peerID)?.kind.attemptTimeout(asked: asked) ?? asked
    }

    /// The carrier whose devices have IDs of the form of `peerID`; nil for a hexd peer's.
    func carrier(of peerID: String?) -> ForeignCarriers.Entry? {
        guard let peerID else { return nil }
        return carriers.entries.first { $0.kind.owns(peerID) }
    }

    /// The route of a send about to be queued, handed to its first attempt; nil when the peer is
    /// away for now (no reason to refuse it). A send that could never be made (plaintext where it
    /// is refused, `--legacy` to a peer known by its key) is refused now.
    /// - Throws: `SendError.refused`.
    func plan(_ target: Target, forceLegacy: Bool) async throws(SendError) -> PeerRoute? {
        if let id = target.peerUUID, let entry = carrier(of: id) {
            guard let carrier = entry.carrier else { throw entry.missing }
            guard !forceLegacy else { throw .refused("--legacy is hexd's own protocol; \(target.label) is not hexd") }
            try await carrier.refuseUnlessAllowed(id)
            return nil
        }
        do {
            return try await route(target, forceLegacy: forceLegacy)
        } catch {
            if case .refused = error { throw error }
            return nil
        }
    }

    /// Delivers `envelope`, written for a current peer, to `target` once.
    ///
    /// - Parameters:
    ///   - wait: wait for the Ack (or, from a legacy peer, the end of the connection); false
    ///     returns once the envelope is written.
    ///   - forceLegacy: send only what the original app understood, whatever the peer announced.
    /// - Throws: `SendError`: `.undelivered` (the peer is away, did not answer, or could not store
    ///   it: worth trying again) or `.refused` (it never will take it).
    func deliver(_ envelope: Envelope, to target: Target, forceLegacy: Bool, wait: Bool, timeout: Duration)
        async throws(SendError) -> Receipt
    {
        if let id = target.peerUUID, let entry = carrier(of: id) {
            _ = try await plan(target, forceLegacy: forceLegacy)
            guard let carrier = entry.carrier else { throw entry.missing }
            let receipt = try await carrier.deliver(envelope, to: id, timeout: timeout)
            return Receipt(peer: receipt.peer, messageID: receipt.messageID, delivery: receipt.delivery, keyProof: nil)
        }
        return try await deliver(
            envelope, over: try await route(target, forceLegacy: forceLegacy), wait: wait, timeout: timeout)
    }

    /// Delivers `envelope` once over a route resolved already (`plan`, `route`). The directory
    /// learns what the delivery proved; the key it proved, when the store must keep it, is in the
    /// receipt, for the caller to keep with the rest of what the send changes (one store call).
    /// - Parameter encoded: `envelope` as encoded already, written as it is to a current peer.
    func deliver(
        _ envelope: Envelope, encoded: [UInt8]? = nil, over route: PeerRoute, wait: Bool, timeout: Duration
    ) async throws(SendError) -> Receipt {
        let adapted = route.dialect.adapted(envelope)
        let delivery = try await EnvelopeSender.send(
            adapted, encoded: route.dialect.generation == .current ? encoded : nil, to: route.endpoints,
            security: route.security, timeout: timeout,
            maximumLineLength: wire.maximumLineLength, awaitReply: wait, pool: pool)
        let keyProof = await delivered(over: route, delivery)
        let outcome = delivery.status?.rawValue ?? "sent"
        let milliseconds = Int(clamping: delivery.elapsed.inSeconds * 1_000)
        logger.info(
            "\(adapted.operationType) to \(route.label): \(outcome) in \(milliseconds) ms",
            [("peer", route.label), ("messageID", adapted.messageID ?? ""), ("status", outcome)])
        return Receipt(peer: route.label, messageID: adapted.messageID, delivery: delivery, keyProof: keyProof)
    }

    /// Records in the directory what a delivery proved: the peer was exchanged with, and its key
    /// answered at that address (tried first next time). Returns the key to pin (on first use) or
    /// the pin to move, when the route did not hold it already.
    private func delivered(over route: PeerRoute, _ delivery: EnvelopeDelivery) async -> HexService.KeyProof? {
        // A key proved where hexd chose to send: that address is a known peer's from now on.
        if delivery.peerKey != nil, let address = delivery.endpoint.address { gate.markKnown(address) }
        guard let peer = route.peer else { return nil }
        await directory.recordDelivery(
            to: peer.uuid, provenAt: delivery.peerKey == nil ? nil : delivery.endpoint.address)
        guard let key = delivery.peerKey else { return nil }
        if let owner = route.legacyPinOwner { return .moved(from: owner, to: peer.uuid) }
        return route.pin == nil ? .firstUse(peer: peer.uuid, fingerprint: key.description) : nil
    }

    /// The one route of a send: where the peer is now, in which dialect, and which key it must
    /// prove (Protocol.md, section 12).
    /// - Throws: `SendError.undelivered` for a peer not in the table (or a store error reading its
    ///   key), `.refused` for a send this daemon will not make.
    func route(_ target: Target, forceLegacy: Bool) async throws(SendError) -> PeerRoute {
        let peer: PeerTable.Peer?
        let endpoints: [Endpoint]
        var legacyPinOwner: String?
        var pin: PeerPin?
        if let address = target.address {
            peer = if let found = target.found { found } else { await directory.peer(at: address) }
            endpoints = [address]
        } else if let found = target.found {
            peer = found
            endpoints = found.endpoints
        } else if let uuid = target.peerUUID, let found = await directory.peer(uuid: uuid) {
            peer = found
            endpoints = found.endpoints
        } else if let uuid = target.peerUUID, let (legacyPin, found) = try await legacyPinRoute(uuid) {
            (peer, endpoints, legacyPinOwner, pin) = (found, found.endpoints, uuid, legacyPin)
        } else {
            throw .undelivered(await whyAway(target))
        }
        // Playing a legacy peer means sending like one, whoever the receiver is.
        let dialect = Dialect(
            sendingTo: peer?.versionID, forceLegacy: forceLegacy || wire.legacy,
            versionID: wire.appVersion)
        if let peer, pin == nil {
            do {
                pin = try await service.pin(forPeer: peer.uuid)
            } catch {
                throw .undelivered("cannot read the key pinned to \(target.label): \(error)")
            }
        }
        let first = endpoints.first?.description ?? target.label
        let label = peer.map { "\($0.name) (\(first))" } ?? first
        let security = try security(for: peer, labelled: label, pinned: pin, dialect: dialect)
        if case .plaintext = security, wire.plaintext == .refuse {
            throw .refused(
                "\(label) speaks no TLS (a legacy peer, or --legacy), and this daemon refuses plaintext "
                    + "(--plaintext refuse)"
            )
        }
        return PeerRoute(
            peer: peer, endpoints: endpoints, label: label, dialect: dialect, security: security, pin: pin,
            legacyPinOwner: legacyPinOwner)
    }

    /// For a UUID pinned before device IDs were derived from keys, and silent since: the peer
    /// that announces the pinned certificate under its derived ID now, with the pin. The send
    /// proves that certificate before it writes, so a beacon lying about it costs one dial.
    private func legacyPinRoute(_ uuid: String) async throws(SendError) -> (PeerPin, PeerTable.Peer)? {
        guard !uuid.isKeyDerivedID else { return nil }
        let pin: PeerPin?
        do {
            pin = try await service.pin(forPeer: uuid)
        } catch {
            throw .undelivered("cannot read the key pinned to \(uuid): \(error)")
        }
        guard let pin else { return nil }
        return await directory.peers.first { $0.isSigned && $0.fingerprint == pin.fingerprint }.map { (pin, $0) }
    }

    /// Why a peer is not in the table, and what to do when it is a matter of keys: its UUID is
    /// claimed with another key than the pinned one, or its name is announced by another key.
    private func whyAway(_ target: Target) async -> String {
        let uuid = target.peerUUID ?? ""
        if let impostor = await directory.impostors.first(where: { $0.uuid == uuid }) {
            let announced = impostor.fingerprint.map { "the key \($0)" } ?? "no key"
            return "\(target.label) is not sent to: its beacons from \(impostor.endpoint) announce \(announced), "
                + "not \(impostor.pinned), the key pinned to it. "
                + "If it was reinstalled, forget the old key with: hexctl trust --reset \(uuid)"
        }
        let name = target.label.lowercased()
        if let namesake = await directory.peers.first(where: { $0.uuid != uuid && $0.name.lowercased() == name }) {
            return "\(target.label) (\(uuid.prefix(8))) is away, and another key announces that name now, "
                + "as \(namesake.uuid). If \(target.label) was reinstalled, send to \(namesake.uuid) "
                + "and forget the old key with: hexctl trust --reset \(uuid)"
        }
        return "\(target.label) is away: no beacon heard from it lately"
    }

    /// TLS to a peer whose key is pinned, proving that key whatever its beacons say (a beacon
    /// announcing no TLS must not talk a daemon into plaintext); TLS to every other current peer
    /// (one whose beacons are signed, or found by DNS-SD under a key-derived ID), proving the key
    /// its ID derives from, and to an address the user typed (any key); plaintext to a legacy peer.
    /// - Throws: `SendError.refused` for plaintext (`--legacy`) to a peer known by its key.
    private func security(
        for peer: PeerTable.Peer?, labelled label: String, pinned pin: PeerPin?, dialect: Dialect
    ) throws(SendError) -> EnvelopeSender.Security {
        let deviceID = peer.flatMap { $0.isSigned || $0.uuid.isKeyDerivedID ? UUID(strict: $0.uuid) : nil }
        if let pin, let pinned = Fingerprint(hex: pin.fingerprint) {
            guard let tls, dialect.generation == .current else {
                throw .refused("\(label) is known by its key \(pinned); it is never sent plaintext (--legacy)")
            }
            return .tls(tls, expected: pinned, deviceID: deviceID)
        }
        guard let tls, dialect.generation == .current else { return .plaintext }
        guard let peer else { return .tls(tls, expected: nil) }
        guard peer.speaksTLS else { return .plaintext }
        // Found by DNS-SD alone, no certificate was announced: the key proven must derive the ID.
        return .tls(tls, expected: peer.fingerprint.flatMap(Fingerprint.init(hex:)), deviceID: deviceID)
    }
}
