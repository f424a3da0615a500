import HexCarrier
import HexCommandLine
import HexEngine
import HexKit
import HexNet
import HexTLS

/// hexd's own protocol as a carrier: the original app's envelopes, written to a peer in the
/// dialect it understands, over TLS proving the key its ID derives from (plaintext only to a
/// legacy peer), and its answer awaited. Its peers are the directory's, named by UUID, and an
/// address the person types is one of its targets. Pairing and fetching files speak it too, over
/// the routes it resolves.
struct EnvelopeCarrier: SendingCarrier {
    static let name = "hexd"
    static let kind = PeerKind.hexd
    /// Its peers go by UUIDs, which are no registered form.
    static let idForms: [PeerIDForm] = []
    static let takesAddresses = true

    let wire: WireSettings
    /// This device's TLS; nil when playing a legacy peer.
    let tls: TLSContext?
    let directory: PeerDirectory
    /// The store, for the keys pinned to peers.
    let service: HexService
    let logger: Logger
    /// TLS connections kept open between sends to the same peer.
    let pool: ConnectionPool
    /// Learns where known peers are: a delivery that proved a key.
    let gate: HandshakeGate

    static func owns(_ peerID: String) -> Bool { peerID.canonicalUUID != nil }

    static func namesake(_ id: String) -> Namesake { .hexdPeer(id) }

    /// A peer's answer is awaited as long as its caller waits.
    static func attemptTimeout(asked: Duration) -> Duration { asked }

    /// The peer in the table that `text` names: its name, its UUID or a unique prefix of it.
    /// - Throws: `LookupError` when several peers match.
    func target(named text: String) async throws(LookupError) -> CarrierTarget? {
        do {
            let peer = try await directory.peer(matching: text)
            return CarrierTarget(peerID: peer.uuid, label: peer.name)
        } catch {
            guard case .noPeer = error else { throw error }
            return nil
        }
    }

    /// The address itself: the send stays there, whoever answers (named after the peer there now).
    func target(at address: Endpoint) async -> CarrierTarget? {
        let peer = await directory.peer(at: address)
        return CarrierTarget(
            peerID: nil, address: address, label: peer.map { "\($0.name) (\(address))" } ?? "\(address)")
    }

    /// A pinned peer's full UUID: it may be away for now, and the send waits for it.
    func target(unlisted id: String) async throws -> CarrierTarget? {
        try await service.pin(forPeer: id) == nil ? nil : CarrierTarget(peerID: id, label: id)
    }

    /// The route of a send about to be queued; nil when the peer is away for now. A send that
    /// could never be made (plaintext where it is refused, `--legacy` to a peer known by its key)
    /// is refused now.
    func plan(_ target: CarrierTarget, legacy: Bool) async throws(SendError) -> SendPlan? {
        do {
            return SendPlan(try await route(target, forceLegacy: legacy))
        } catch {
            if case .refused = error { throw error }
            return nil
        }
    }

    /// Delivers the envelope once, over the route `plan` found or one resolved now.
    func deliver(_ send: CarrierSend) async throws(SendError) -> CarrierReceipt {
        let route =
            if let planned = send.plan?.value as? PeerRoute {
                planned
            } else {
                try await route(send.target, forceLegacy: send.legacy)
            }
        return try await deliver(
            send.envelope, encoded: send.encoded, over: route, wait: send.wait, timeout: send.timeout)
    }

    /// Delivers `envelope` once over a route resolved already (`plan`, `route`). The directory
    /// learns what the delivery proved; the key it proved, when the store must keep it, is in the
    /// receipt, for the caller to keep with the rest of what the send changes (one store call).
    /// - Parameter encoded: `envelope` as encoded already, written as it is to a current peer.
    func deliver(
        _ envelope: Envelope, encoded: [UInt8]? = nil, over route: PeerRoute, wait: Bool, timeout: Duration
    ) async throws(SendError) -> CarrierReceipt {
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
        return CarrierReceipt(peer: route.label, messageID: adapted.messageID, delivery: delivery, keyProof: keyProof)
    }

    /// Records in the directory what a delivery proved: the peer was exchanged with, and its key
    /// answered at that address (tried first next time). Returns the key to pin (on first use) or
    /// the pin to move, when the route did not hold it already.
    private func delivered(over route: PeerRoute, _ delivery: EnvelopeDelivery) async -> KeyProof? {
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
    func route(_ target: CarrierTarget, forceLegacy: Bool) async throws(SendError) -> PeerRoute {
        let peer: PeerTable.Peer?
        let endpoints: [Endpoint]
        var legacyPinOwner: String?
        var pin: PeerPin?
        if let address = target.address {
            peer = await directory.peer(at: address)
            endpoints = [address]
        } else if let uuid = target.peerID, let found = await directory.peer(uuid: uuid) {
            peer = found
            endpoints = found.endpoints
        } else if let uuid = target.peerID, let (legacyPin, found) = try await legacyPinRoute(uuid) {
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
    private func whyAway(_ target: CarrierTarget) async -> String {
        let uuid = target.peerID ?? ""
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
