import HexKit
import HexNet
import HexTLS

/// Delivers envelopes to peers: finds where the destination is now, writes the envelope in the
/// dialect the peer understands over the connection its key calls for, and waits for its answer.
/// The outbox decides when, and what an outcome means.
struct SendService: Sendable {
    let configuration: DaemonConfiguration
    /// This device's TLS; nil when playing a legacy peer.
    let tls: TLSContext?
    let discovery: Discovery
    /// The store, for the keys pinned to peers and the peers seen before.
    let service: HexService
    let logger: Logger
    /// TLS connections kept open between sends to the same peer.
    let pool: ConnectionPool

    /// Where a send goes: a peer by its UUID, sent to wherever it announces itself, or an address
    /// the user typed, which the send stays at.
    struct Target: Sendable, Equatable {
        var peerUUID: String?
        var address: Endpoint?
        /// The destination as the user reads it.
        var label: String
    }

    /// A send the peer took.
    struct Receipt: Sendable {
        /// The peer as the user reads it: its name and endpoint, or the endpoint alone.
        var peer: String
        /// The envelope's id; nil when sent to a legacy peer.
        var messageID: String?
        var delivery: EnvelopeSender.Delivery
    }

    /// How one delivery goes: where, in which dialect, over what.
    private struct Plan {
        var endpoint: Endpoint
        var peer: PeerTable.Peer?
        var label: String
        var dialect: Dialect
        var security: EnvelopeSender.Security
    }

    /// The target `text` names: `HOST:PORT`; a peer in the table by name, UUID or unique UUID
    /// prefix; else a peer seen before (by name or UUID prefix, as remembered) or a pinned peer's
    /// full UUID: it may be away for now, and the send waits for it.
    /// - Throws: `LookupError` when `text` names no peer, or a store error.
    func target(_ text: String) async throws -> Target {
        if let address = Endpoint(parsing: text) {
            return Target(peerUUID: nil, address: address, label: await discovery.peer(at: address).map { "\($0.name) (\(address))" } ?? address.description)
        }
        do {
            let peer = try await discovery.peer(matching: text)
            return Target(peerUUID: peer.uuid, address: nil, label: peer.name)
        } catch {
            guard case .noPeer = error else { throw error }
        }
        if let seen = try await service.knownPeer(matching: text) { return Target(peerUUID: seen.uuid, address: nil, label: seen.name) }
        guard let uuid = UUID(uuidString: text)?.uuidString, try await service.pin(forPeer: uuid) != nil else { throw LookupError.noPeer(text) }
        return Target(peerUUID: uuid, address: nil, label: uuid)
    }

    /// Refuses now a send that could never be made (plaintext where it is refused, `--legacy` to
    /// a peer known by its key); a peer away for now is no reason.
    /// - Throws: `SendError.refused`.
    func check(_ target: Target, forceLegacy: Bool) async throws(SendError) {
        do {
            _ = try await plan(target, forceLegacy: forceLegacy)
        } catch {
            if case .refused = error { throw error }
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
    func deliver(_ envelope: Envelope, to target: Target, forceLegacy: Bool, wait: Bool, timeout: Duration) async throws(SendError) -> Receipt {
        let plan = try await plan(target, forceLegacy: forceLegacy)
        let envelope = plan.dialect.adapted(envelope)
        let delivery = try await EnvelopeSender.send(
            envelope, to: plan.endpoint, security: plan.security, timeout: timeout,
            maximumLineLength: configuration.maximumLineLength, awaitReply: wait, pool: pool)
        if let peer = plan.peer {
            await discovery.markExchanged([peer.uuid])
            if let key = delivery.peerKey {
                do {
                    try await service.pinOnFirstUse(peer: peer.uuid, fingerprint: key.description)
                } catch {
                    logger.warning("cannot pin the key of \(plan.label): \(error)")
                }
            }
        }
        let outcome = delivery.status?.rawValue ?? "sent"
        logger.info("\(envelope.operationType) to \(plan.label): \(outcome) in \(Int(clamping: delivery.elapsed.inSeconds * 1_000)) ms",
                    [("peer", plan.label), ("messageID", envelope.messageID ?? ""), ("status", outcome)])
        return Receipt(peer: plan.label, messageID: envelope.messageID, delivery: delivery)
    }

    /// - Throws: `SendError.undelivered` for a peer not in the table (or a store error reading its
    ///   key), `.refused` for a send this daemon will not make.
    private func plan(_ target: Target, forceLegacy: Bool) async throws(SendError) -> Plan {
        let endpoint: Endpoint
        let peer: PeerTable.Peer?
        if let address = target.address {
            endpoint = address
            peer = await discovery.peer(at: address)
        } else if let uuid = target.peerUUID, let found = await discovery.peer(uuid: uuid) {
            endpoint = found.endpoint
            peer = found
        } else {
            throw .undelivered("\(target.label) is away: no beacon heard from it lately")
        }
        // Playing a legacy peer means sending like one, whoever the receiver is.
        let dialect = Dialect(sendingTo: peer?.versionID, forceLegacy: forceLegacy || configuration.legacy, versionID: configuration.appVersion)
        var pin: PeerPin?
        if let peer {
            do {
                pin = try await service.pin(forPeer: peer.uuid)
            } catch {
                throw .undelivered("cannot read the key pinned to \(target.label): \(error)")
            }
        }
        let label = peer.map { "\($0.name) (\(endpoint))" } ?? endpoint.description
        let security = try security(for: peer, labelled: label, pinned: pin, dialect: dialect)
        if case .plaintext = security, configuration.plaintext == .refuse {
            throw .refused("\(label) speaks no TLS (a legacy peer, or --legacy), and this daemon refuses plaintext (--plaintext refuse)")
        }
        return Plan(endpoint: endpoint, peer: peer, label: label, dialect: dialect, security: security)
    }

    /// TLS to a peer whose key is pinned, proving that key whatever its beacons say (a beacon
    /// announcing no TLS must not talk a daemon into plaintext); TLS to every other current peer
    /// that announced it, proving the key it announced, and to an address the user typed (any
    /// key); plaintext to a legacy peer, and to a peer announcing no TLS.
    /// - Throws: `SendError.refused` for plaintext (`--legacy`) to a peer known by its key.
    private func security(for peer: PeerTable.Peer?, labelled label: String, pinned pin: PeerPin?, dialect: Dialect) throws(SendError) -> EnvelopeSender.Security {
        if let pin, let pinned = Fingerprint(hex: pin.fingerprint) {
            guard let tls, dialect.generation == .current else {
                throw .refused("\(label) is known by its key \(pinned); it is never sent plaintext (--legacy)")
            }
            return .tls(tls, expected: pinned)
        }
        guard let tls, dialect.generation == .current else { return .plaintext }
        guard let peer else { return .tls(tls, expected: nil) }
        guard peer.speaksTLS, let announced = peer.fingerprint.flatMap(Fingerprint.init(hex:)) else { return .plaintext }
        return .tls(tls, expected: announced)
    }
}
