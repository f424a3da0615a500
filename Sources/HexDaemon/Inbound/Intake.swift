import HexCarrier
import HexKit

/// What every carrier's listener does with what a peer sent (hexd's envelope server, LocalSend's
/// API): stores it through `HexManager` in one group commit (its accept policy, blocks and
/// budgets, one rule for every kind of peer), logs each outcome, publishes the events and the
/// arrivals, and marks the senders as peers hexes were exchanged with.
struct Intake: Sendable {
    let service: HexService
    let directory: PeerDirectory
    let events: EventLog
    /// Where what was kept goes for the services acting on it.
    let arrivals: ArrivalFeed
    let logger: Logger

    /// Acts on `envelopes` from one sender, in order, and returns each one's outcome once what they
    /// stored is committed.
    /// - Parameters:
    ///   - remote: the sender as the log names it (an endpoint).
    ///   - address: its IP address (a sender without proof is accounted by it).
    ///   - attachedBytes: the bytes of the files that came with a Store's hex (`HexManager.receive`).
    func take(
        _ envelopes: [Envelope], proof: SenderProof, from remote: String, address: String, attachedBytes: Int = 0
    ) async -> [Result<ReceiveOutcome, any Error>] {
        guard !envelopes.isEmpty else { return [] }
        let outcomes = await service.receive(envelopes, proof: proof, from: address, attachedBytes: attachedBytes)
        var record = Record()
        for (envelope, outcome) in zip(envelopes, outcomes) {
            switch outcome {
            case .success(let outcome):
                await log(outcome, of: envelope, from: remote, into: &record)
            case .failure(let error):
                logger.limited("store failure", .error, "cannot store what \(remote) sent: \(error)")
            }
        }
        // One call each for all the envelopes: a call to another actor is a hop between threads.
        if !record.senders.isEmpty { await directory.markExchanged(record.senders) }
        if !record.events.isEmpty { await events.publish(record.events) }
        arrivals.publish(record.arrivals)
        return outcomes
    }

    /// Whether `id` is a peer paired with its key `fingerprint` (any case): one hexd knows, whose
    /// address the handshake gate lets through. A key pinned on first use is no such peer: under
    /// `--accept anyone` any stranger gets one pinned by sending one hex. A store that cannot be
    /// read knows no one.
    func hasPaired(_ id: String, byKey fingerprint: String) async -> Bool {
        guard let pin = try? await service.pin(forPeer: id), pin.trust == .paired else { return false }
        return pin.fingerprint.lowercased() == fingerprint.lowercased()
    }

    /// What envelopes received together leave to record once they are all logged.
    private struct Record {
        /// The UUIDs of peers a hex came from.
        var senders: [String] = []
        var events: [Happening] = []
        var arrivals: [Arrival] = []
    }

    private func log(
        _ outcome: ReceiveOutcome, of envelope: Envelope, from remote: String,
        into record: inout Record
    ) async {
        let name = envelope.hex?.senderName.flatMap { $0.isEmpty ? nil : $0 }
        // A name is no identity: the short ID goes with it.
        let id = envelope.hex?.senderUUID.flatMap(\.shortPeerID).map { " (" + $0 + ")" } ?? ""
        let sender = name.map { $0.clipped(toUTF8: 200) + id } ?? remote
        switch outcome {
        case .stored(let hex):
            record.senders.append(hex.senderUUID)
            logger.limited(
                "stored hex", .info,
                "stored hex \(hex.id.uppercaseText) \"\(hex.hexDescription.clipped(toUTF8: 200))\" "
                    + "from \(sender) "
                    + "(version \(envelope.versionID.clipped(toUTF8: 40)), \(hex.links.count) links)",
                [
                    ("peer", sender.clipped(toUTF8: 200)), ("remote", remote), ("hex", hex.id.uppercaseText),
                    ("links", String(hex.links.count)), ("status", "stored"),
                ])
            record.events.append(
                Happening(
                    .hexReceived, peerUUID: hex.senderUUID, peer: name ?? remote,
                    versionID: envelope.versionID,
                    id: hex.id.uppercaseText, message: hex.hexDescription))
            record.arrivals.append(.hex(hex))
        case .alert(let alert):
            // An Alert names no sender: over TLS the proven key does, by its ID and the name it announces.
            let (message, senderID) = (alert.message, alert.senderID)
            let announced = if let senderID { await directory.peer(uuid: senderID)?.name } else { String?.none }
            let from =
                senderID.map { "\(announced ?? "a peer not announced") (\($0)) at \(remote)" }
                ?? "\(remote) (plaintext: no proven sender)"
            let version = envelope.versionID.clipped(toUTF8: 40)
            logger.limited(
                "alert", .info, "alert from \(from) (version \(version)): \(message.clipped(toUTF8: 200))",
                [("peer", announced ?? remote), ("peerUUID", senderID ?? ""), ("remote", remote)])
            record.events.append(
                Happening(
                    .alertReceived, peerUUID: senderID, peer: announced ?? remote,
                    versionID: envelope.versionID, id: alert.id.uppercaseText,
                    message: message))
            record.arrivals.append(.alert(from: announced ?? remote, message: message))
        case .noRoom:
            break  // The store logs it, once a minute per sender.
        default:
            logger.limited(
                "refused envelope", .info,
                "\(outcome.ackStatus) from \(sender.clipped(toUTF8: 200)) "
                    + "(version \(envelope.versionID.clipped(toUTF8: 40))): \(outcome.explanation)",
                [("peer", sender.clipped(toUTF8: 200)), ("remote", remote), ("status", outcome.ackStatus.rawValue)])
        }
    }
}
