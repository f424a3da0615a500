import HexKit
import HexNet
import HexTLS

/// Sends hexes and alerts to peers: finds the destination, writes the envelope in the dialect
/// the peer understands, waits for its answer, and logs and announces the outcome.
struct SendService: Sendable {
    let configuration: DaemonConfiguration
    /// This device's TLS; nil when playing a legacy peer.
    let tls: TLSContext?
    let discovery: Discovery
    /// The store, for the keys pinned to peers (and this daemon's identity).
    let service: HexService
    let events: EventLog
    let logger: Logger
    /// TLS connections kept open between sends to the same peer.
    let pool: ConnectionPool

    /// What is sent.
    enum Payload: Sendable {
        case hex(Hex)
        case alert(String)
    }

    /// A send the peer took.
    struct Receipt: Sendable {
        /// The peer as the user reads it: its name and endpoint, or the endpoint alone.
        var peer: String
        /// The envelope's id; nil when sent to a legacy peer.
        var messageID: String?
        var delivery: EnvelopeSender.Delivery
    }

    /// Where a send goes and how: a known peer, or any `HOST:PORT`.
    private struct Destination {
        var endpoint: Endpoint
        var label: String
        var peerUUID: String?
        var dialect: Dialect
        var security: EnvelopeSender.Security
    }

    /// Sends `payload` to `peer` (a peer's name, a UUID or a unique prefix of one, or `HOST:PORT`).
    ///
    /// - Parameters:
    ///   - wait: wait for the Ack (or, from a legacy peer, the end of the connection); false
    ///     returns once the envelope is written.
    ///   - forceLegacy: send only what the original app understood, whatever the peer announced.
    /// - Throws: `LookupError` when `peer` names no peer, or `SendError`.
    func send(_ payload: Payload, to peer: String, wait: Bool, timeout: Duration, forceLegacy: Bool) async throws -> Receipt {
        let destination = try await destination(peer, forceLegacy: forceLegacy)
        if case .plaintext = destination.security, configuration.plaintext == .refuse {
            throw SendError.refused("\(destination.label) speaks no TLS (a legacy peer, or --legacy), and this daemon refuses plaintext (--plaintext refuse)")
        }
        let envelope = switch payload {
        case .hex(let hex): destination.dialect.store(hex, from: service.identity)
        case .alert(let message): destination.dialect.alert(message)
        }
        do {
            let delivery = try await EnvelopeSender.send(
                envelope, to: destination.endpoint, security: destination.security, timeout: timeout,
                maximumLineLength: configuration.maximumLineLength, awaitReply: wait, pool: pool)
            if let peerUUID = destination.peerUUID {
                await discovery.markExchanged(peerUUID)
                if let key = delivery.peerKey {
                    do {
                        try await service.pinOnFirstUse(peer: peerUUID, fingerprint: key.description)
                    } catch {
                        logger.warning("cannot pin the key of \(destination.label): \(error)")
                    }
                }
            }
            let outcome = delivery.status?.rawValue ?? "sent"
            logger.info("\(envelope.operationType) to \(destination.label): \(outcome) in \(Int(clamping: delivery.elapsed.inSeconds * 1_000)) ms",
                        [("peer", destination.label), ("messageID", envelope.messageID ?? ""), ("status", outcome)])
            await events.publish(.sendAcked, peerUUID: destination.peerUUID, peer: destination.label, id: envelope.messageID, message: outcome)
            return Receipt(peer: destination.label, messageID: envelope.messageID, delivery: delivery)
        } catch {
            let status = switch error {
            case .undelivered: "undelivered"
            case .refused: "refused"
            }
            logger.warning("\(envelope.operationType) to \(destination.label) failed: \(error)",
                           [("peer", destination.label), ("messageID", envelope.messageID ?? ""), ("status", status)])
            await events.publish(.sendFailed, peerUUID: destination.peerUUID, peer: destination.label, id: envelope.messageID, message: error.description)
            throw error
        }
    }

    /// - Throws: `LookupError`, or a store error reading the peer's pinned key.
    private func destination(_ text: String, forceLegacy: Bool) async throws -> Destination {
        // Playing a legacy peer means sending like one, whoever the receiver is.
        let forceLegacy = forceLegacy || configuration.legacy
        let peer: PeerTable.Peer?
        let endpoint: Endpoint
        if let typed = Endpoint(parsing: text) {
            endpoint = typed
            peer = await discovery.peer(at: typed)
        } else {
            let found = try await discovery.peer(matching: text)
            endpoint = found.endpoint
            peer = found
        }
        let dialect = Dialect(sendingTo: peer?.versionID, forceLegacy: forceLegacy, versionID: configuration.appVersion)
        var pin: PeerPin?
        if let peer { pin = try await service.pin(forPeer: peer.uuid) }
        let label = peer.map { "\($0.name) (\(endpoint))" } ?? endpoint.description
        return Destination(endpoint: endpoint, label: label, peerUUID: peer?.uuid,
                           dialect: dialect, security: try security(for: peer, labelled: label, pinned: pin, dialect: dialect))
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
