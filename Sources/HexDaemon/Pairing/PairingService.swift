import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS

/// Pairs this device's key with a peer's, both users comparing a verification code (Protocol.md,
/// section 12): asks a peer (`request`), answers a peer's steps (`receive`), and completes a
/// peer's request once this side's user accepts (`accept`). Exists only where TLS is spoken.
actor PairingService {
    /// Where a step of `hexctl pair` left a peer.
    struct Outcome: Sendable, Equatable {
        let peerUUID: String
        /// The peer's name, as it announced it.
        let name: String
        let key: Fingerprint
        /// How the key is trusted now; nil when nothing is pinned to the peer.
        let trust: SenderTrust?
        /// The verification code both users compare.
        let code: String?
        /// The pairing waits for the peer's user to accept.
        let awaitingPeer: Bool
    }

    /// A pairing under way with a peer, as `hexctl peers` shows it.
    struct Pending: Sendable, Equatable {
        /// The verification code both sides show.
        let code: String
        /// The peer asked, and this side's user accepts; false: this side asked and waits.
        let awaitingUs: Bool
    }

    private let tls: TLSContext
    private let wire: WireSettings
    private let directory: PeerDirectory
    private let service: HexService
    /// Resolves the route to a peer, as for any send to it.
    private let envelopes: EnvelopeCarrier
    private let events: EventLog
    /// Where a pairing request goes for a desktop notification.
    private let arrivals: ArrivalFeed
    private let logger: Logger
    private var book = PairingBook()
    private var admission = PairingAdmission()

    init(
        tls: TLSContext, wire: WireSettings, directory: PeerDirectory, service: HexService,
        envelopes: EnvelopeCarrier,
        events: EventLog, arrivals: ArrivalFeed, logger: Logger
    ) {
        self.tls = tls
        self.envelopes = envelopes
        self.wire = wire
        self.directory = directory
        self.service = service
        self.events = events
        self.arrivals = arrivals
        self.logger = logger
    }

    private var ownKey: Fingerprint { tls.identity.fingerprint }

    // MARK: This side's user

    /// Asks a peer to pair: exchanges nonces with it over TLS (its key proven: the pinned one, or
    /// the one it announced) and returns the code both users compare. The peer's user then accepts.
    /// - Throws: `LookupError`, `SendError`.
    func request(_ text: String, timeout: Duration) async throws -> Outcome {
        let peer = try await directory.peer(matching: text)
        let label = "\(peer.name) (\(peer.endpoint))"
        guard peer.speaksTLS else {
            throw SendError.refused("\(label) speaks no TLS (a legacy peer): it has no key to pair with")
        }
        let route = try await envelopes.route(CarrierTarget(peerID: peer.uuid, label: peer.name), forceLegacy: false)
        let pin = try await service.pin(forPeer: peer.uuid)
        let ourNonce = try PairingCode.nonce()
        guard let commitment = PairingCode.commitment(to: ourNonce) else {
            throw SendError.undelivered("cannot hash a nonce")
        }
        let identity = service.identity
        let (theirNonce, theirKey) = try await exchange(over: route, timeout: timeout).converse { conversation in
            let endpoint = conversation.endpoint
            let request = PairJM(
                step: .request, senderUUID: identity.uuid, senderName: identity.name, commitment: commitment)
            let answer = try await conversation.send(request)
            guard let step = answer.pair, step.step == .nonce, step.senderUUID == peer.uuid,
                let nonce = step.nonce.flatMap(PairingCode.nonce(hex:)), let key = conversation.peerKey
            else {
                _ = try EnvelopeSender.taken(answer, from: endpoint)
                throw SendError.refused("\(label) did not answer the pairing request with its nonce")
            }
            _ = try EnvelopeSender.taken(
                try await conversation.send(PairJM(step: .reveal, nonce: PairingCode.hex(ourNonce))), from: endpoint)
            return (nonce, key)
        }
        guard
            let code = PairingCode.verificationCode(
                initiator: ownKey, responder: theirKey, initiatorNonce: ourNonce, responderNonce: theirNonce)
        else {
            throw SendError.undelivered("cannot hash the verification code")
        }
        book.sent(
            .init(
                peerUUID: peer.uuid, name: peer.name, key: theirKey, code: code, expires: .now + PairingBook.lifetime),
            at: .now)
        logger.info("asked \(label) to pair: code \(code), key \(theirKey)")
        return Outcome(
            peerUUID: peer.uuid, name: peer.name, key: theirKey, trust: pin?.trust, code: code, awaitingPeer: true)
    }

    /// Accepts a peer's pairing request, its code compared by this side's user: tells the peer
    /// (which must still be waiting, with the same code), then pins its key as paired.
    /// - Throws: `LookupError`, `SendError`.
    func accept(_ text: String, timeout: Duration) async throws -> Outcome {
        let request = try book.request(matching: text, at: .now)
        let label = "\(request.name) (\(request.peerUUID))"
        guard let code = request.code else { throw LookupError.noPairing(text) }
        if let refusal = try await refusal(of: request.peerUUID, key: request.key) { throw SendError.refused(refusal) }
        let peer = try await directory.peer(matching: request.peerUUID)
        let accept = PairJM(step: .accept, senderUUID: service.identity.uuid, code: code)
        var route = try await envelopes.route(CarrierTarget(peerID: peer.uuid, label: peer.name), forceLegacy: false)
        // The key that asked, and no other, is told.
        route.security = .tls(tls, expected: request.key, deviceID: UUID(strict: request.peerUUID))
        try await exchange(over: route, timeout: timeout).converse { conversation in
            _ = try EnvelopeSender.taken(try await conversation.send(accept), from: conversation.endpoint)
        }
        book.closeIncoming(request.key)
        _ = try await service.pair(peer: request.peerUUID, fingerprint: request.key.description)
        await paired(request.peerUUID, name: request.name, key: request.key, code: code)
        logger.info("paired with \(label): code \(code), key \(request.key)")
        return Outcome(
            peerUUID: request.peerUUID, name: request.name, key: request.key, trust: .paired, code: code,
            awaitingPeer: false)
    }

    /// The UUID of the peer whose request waits for this side's user that `text` names (its name
    /// or a prefix of its UUID).
    /// - Throws: `LookupError.noPairing` when none does; `.ambiguousPeer` when several do.
    func request(matching text: String) throws(LookupError) -> String {
        try book.request(matching: text, at: .now).peerUUID
    }

    /// Drops the request a peer sent, unaccepted: nothing is pinned or sent (the peer's own request
    /// runs out on its side).
    /// - Throws: `LookupError` when no request from that peer waits.
    func decline(_ text: String) throws -> Outcome {
        let request = try book.request(matching: text, at: .now)
        book.closeIncoming(request.key)
        logger.info("declined the pairing request of \(request.name) (\(request.peerUUID))")
        return Outcome(
            peerUUID: request.peerUUID, name: request.name, key: request.key, trust: nil, code: request.code,
            awaitingPeer: false)
    }

    /// The pairings under way with any of `uuids`, by UUID, in one call (for `hexctl peers`).
    func pending(for uuids: [String]) -> [String: Pending] {
        let now = ContinuousClock.now
        var pending: [String: Pending] = [:]
        for uuid in uuids {
            pending[uuid] = book.pending(for: uuid, at: now).map { Pending(code: $0.code, awaitingUs: $0.awaitingUs) }
        }
        return pending
    }

    /// Drops every pairing under way with a peer (its trust was reset).
    func forget(peerUUID uuid: String) {
        book.forget(peerUUID: uuid)
    }

    // MARK: Peers

    /// Acts on a Pair envelope from `remote` (`HOST:PORT`) and returns the reply: the next step, or
    /// an Ack.
    func receive(_ envelope: Envelope, proof: SenderProof, from remote: String) async -> Envelope {
        // A stranger's requests are counted by host: each connection has a port of its own.
        let source = Endpoint(parsing: remote)?.host ?? remote
        func ack(_ status: AckStatus, _ message: String) -> Envelope {
            .ack(status, messageID: envelope.messageID, message: message, versionID: wire.appVersion)
        }
        guard case .key(let proven, let deviceID) = proof, let key = Fingerprint(hex: proven) else {
            return ack(.rejected, "pairing needs TLS: over plaintext there is no key to pair")
        }
        if let claimed = envelope.pair?.senderUUID, claimed != deviceID {
            return ack(
                .rejected,
                "senderUUID \(claimed) is not the ID of the key this connection proved: that key's ID is \(deviceID)")
        }
        guard let messageID = envelope.messageID, let step = envelope.pair else {
            return ack(.invalid, "a Pair envelope needs a messageID and a well-formed Pair object (jmObjectType Pair)")
        }
        do {
            switch step.step {
            case .request:
                guard let uuid = step.senderUUID, let commitment = step.commitment else {
                    return ack(.invalid, "a pairing request needs senderUUID and commitment")
                }
                if let refusal = try await refusal(of: uuid, key: key) { return ack(.rejected, refusal) }
                let isKnown = try await isKnown(uuid)
                guard isKnown || admission.admitStranger(at: .now) else { throw PairingError.busy }
                let nonce = try PairingCode.nonce()
                try book.received(
                    from: key, uuid: uuid, name: step.senderName ?? "", commitment: commitment,
                    ourNonce: nonce,
                    source: source, isKnown: isKnown, at: .now)
                let identity = service.identity
                return .pair(
                    PairJM(
                        step: .nonce, senderUUID: identity.uuid, senderName: identity.name,
                        nonce: PairingCode.hex(nonce)),
                    versionID: wire.appVersion, messageID: messageID)
            case .reveal:
                guard let nonce = step.nonce.flatMap(PairingCode.nonce(hex:)) else {
                    return ack(.invalid, "a reveal needs a nonce")
                }
                let request = try book.revealed(nonce: nonce, by: key, ownKey: ownKey, at: .now)
                let code = request.code ?? ""
                logger.info(
                    "\(request.name.clipped(toUTF8: 80)) (\(request.peerUUID)) asks to pair: code \(code); "
                        + "accept with: hexctl pair --accept \(request.peerUUID)"
                )
                await events.publish(.pairRequested, peerUUID: request.peerUUID, peer: request.name, message: code)
                arrivals.publish([.pairRequest(name: request.name, peerUUID: request.peerUUID, code: code)])
                return ack(.received, "waiting for the user of \(service.identity.name) to compare the code and accept")
            case .accept:
                guard let uuid = step.senderUUID, let code = step.code else {
                    return ack(.invalid, "an accept needs senderUUID and code")
                }
                let request = try book.accepted(by: key, uuid: uuid, code: code, at: .now)
                _ = try await service.pair(peer: uuid, fingerprint: key.description)
                await paired(uuid, name: request.name, key: key, code: code)
                logger.info("paired with \(request.name.clipped(toUTF8: 80)) (\(uuid)): code \(code), key \(key)")
                return ack(.stored, "paired")
            case .nonce:
                return ack(.invalid, "a nonce answers a pairing request; it is never sent alone")
            }
        } catch let error as PairingError {
            logger.limited(
                "pairing refused", .info, "refused a pairing step (\(step.step.rawValue)) from key \(key): \(error)")
            return ack(.rejected, error.description)
        } catch {
            logger.limited(
                "pairing failure", .error,
                "cannot answer a pairing step (\(step.step.rawValue)) from key \(key): \(error)")
            return ack(.failed, "the receiver could not record it: \(error)")
        }
    }

    // MARK: Helpers

    /// A connection over `route`, whose security says which key the peer must prove.
    private func exchange(over route: PeerRoute, timeout: Duration) -> PairingExchange {
        PairingExchange(
            route: route, versionID: wire.appVersion,
            maximumLineLength: wire.maximumLineLength, timeout: timeout)
    }

    /// Whether a peer asking to pair was known before any flood of strangers: its key is pinned
    /// here, or it announced itself before the flood began.
    private func isKnown(_ uuid: String) async throws -> Bool {
        if try await service.pin(forPeer: uuid) != nil { return true }
        guard let peer = await directory.peer(uuid: uuid) else { return false }
        return admission.knewBefore(peer.firstSeen, at: .now)
    }

    /// Why a UUID and a key may not be paired, if they may not: either is pinned to another, or
    /// the UUID is blocked, or it is this daemon's own.
    private func refusal(of uuid: String, key: Fingerprint) async throws -> String? {
        if uuid == service.identity.uuid { return "\(uuid) is this daemon's own UUID" }
        if let pin = try await service.pin(forPeer: uuid), pin.fingerprint != key.description {
            return
                "\(uuid) is pinned to the key \(pin.fingerprint), not \(key); if that peer was reinstalled, "
                + "its key is reset with: hexctl trust --reset \(uuid)"
        }
        if let owner = try await service.pinnedPeer(forKey: key.description), owner != uuid {
            return "the key \(key) belongs to the peer \(owner), not to \(uuid)"
        }
        if try await service.isBlocked(senderUUID: uuid) { return "\(uuid) is blocked here" }
        return nil
    }

    private func paired(_ uuid: String, name: String, key: Fingerprint, code: String) async {
        await directory.forgetImpostor(uuid)
        await events.publish(.paired, peerUUID: uuid, peer: name, message: code)
    }
}
