/// What may be sent to, and expected from, a peer of one generation of the protocol; and how
/// this daemon answers, which depends on the generation it plays (Protocol.md, section 7).
///
/// The original app (1.x, the *legacy* generation) knows Store and Alert, four services, no
/// `messageID` and no Ack; it answers nothing but a blocked sender, to whom it sends an Alert.
/// hexd 2.0 (the *current* generation) adds `messageID`, Acks, duplicate detection and any
/// service name. Every envelope hexd writes, outgoing or a reply, is built here, so these rules
/// live in one place.
public struct Dialect: Sendable, Hashable {
    public enum Generation: Sendable, Hashable {
        /// The original app's rules (1.x).
        case legacy
        /// hexd 2.0 and later.
        case current
    }

    public let generation: Generation
    /// The `versionID` written in every envelope.
    public let versionID: String

    public init(_ generation: Generation, versionID: String = HexdVersion.current) {
        self.generation = generation
        self.versionID = versionID
    }

    /// The dialect for sending to a peer that announced `peerVersionID` (nil when it never
    /// announced itself, as an address typed by the user): legacy when the peer is, or when the
    /// sender asks for it (`forceLegacy`: the user's `--legacy`, or a daemon playing a legacy peer).
    public init(sendingTo peerVersionID: String?, forceLegacy: Bool, versionID: String = HexdVersion.current) {
        let legacy = forceLegacy || peerVersionID.map(HexdVersion.isLegacy) == true
        self.init(legacy ? .legacy : .current, versionID: versionID)
    }

    /// Whether a peer speaking this dialect acknowledges what it receives.
    public var acknowledges: Bool { generation == .current }

    // MARK: Sending

    /// The Store envelope that sends `hex` from `identity`. A legacy receiver gets no `messageID`:
    /// the original app would not answer it, so nothing would ever acknowledge it.
    public func store(_ hex: Hex, from identity: LocalIdentity, messageID: UUID = .random()) -> Envelope {
        .store(
            hexJM(hex, from: identity), versionID: versionID, messageID: acknowledges ? messageID.uppercaseText : nil)
    }

    /// The Alert envelope that sends `message` (with a `messageID` only to a peer that acks).
    public func alert(_ message: String, messageID: UUID = .random()) -> Envelope {
        .alert(message, versionID: versionID, messageID: acknowledges ? messageID.uppercaseText : nil)
    }

    /// `envelope`, written for a current peer (as the outbox keeps it), as a peer of this dialect
    /// gets it: to a legacy peer without `messageID` and with only the services the original app knew.
    public func adapted(_ envelope: Envelope) -> Envelope {
        guard generation == .legacy else { return envelope }
        var adapted = envelope
        adapted.messageID = nil
        if var hex = envelope.hex {
            hex.links = hex.links?.map { link in
                var link = link
                link.service = (link.service ?? .unknown).legacySafe
                return link
            }
            adapted.jmObject = .hex(hex)
        }
        return adapted
    }

    /// The wire form of a stored hex, sent from `identity`.
    ///
    /// Never has an empty `senderName` or `hexColor` and always has a `service` on every link:
    /// the original app crashed without them. To a legacy receiver every service is one of the
    /// four the original app knew; a service it did not know becomes `Unknown`.
    public func hexJM(_ hex: Hex, from identity: LocalIdentity) -> HexJM {
        HexJM(
            senderUUID: identity.uuid,
            senderName: identity.name,
            hexDescription: hex.hexDescription,
            hexColor: HexColor.normalized(hex.hexColor) ?? HexColor.fallback,
            links: hex.links.map { link in
                let service =
                    generation == .legacy
                    ? link.service.legacySafe : (link.service.rawValue.isEmpty ? .unknown : link.service)
                return LinkJM(url: link.url, linkDescription: link.linkDescription, service: service)
            }
        )
    }

    // MARK: Receiving and answering

    /// The envelope as this daemon acts on it: playing a legacy peer, it knows nothing of
    /// `messageID` (no Ack, no duplicate detection), so the key is dropped on arrival.
    public func received(_ envelope: Envelope) -> Envelope {
        guard generation == .legacy else { return envelope }
        var envelope = envelope
        envelope.messageID = nil
        return envelope
    }

    /// The reply owed for an envelope with this outcome: an Ack when the envelope had a
    /// `messageID`; to a legacy sender (no `messageID`) only the original app's Alert to a blocked
    /// sender, or an Alert saying why a hex found no room; otherwise nothing. An Ack is never
    /// answered, so two peers cannot loop.
    public func reply(to envelope: Envelope, outcome: ReceiveOutcome) -> Envelope? {
        if envelope.operationType == .ack { return nil }
        if let messageID = envelope.messageID {
            let hexID: String? = if case .stored(let hex) = outcome { hex.id.uppercaseText } else { nil }
            return .ack(
                outcome.ackStatus, messageID: messageID, message: outcome.explanation, versionID: versionID,
                hexID: hexID)
        }
        switch outcome {
        case .rejected(let alert): return .alert(alert, versionID: versionID)
        case .noRoom(let refusal, _): return .alert("Not stored: \(refusal.message).", versionID: versionID)
        default: return nil
        }
    }

    /// The reply to a line that is not an envelope: an Ack `invalid` explaining why, carrying the
    /// line's `messageID` when one could be read. The original app answered nothing.
    public func reply(toUnreadable error: EnvelopeDecodingError) -> Envelope? {
        acknowledges
            ? .ack(.invalid, messageID: error.messageID, message: error.description, versionID: versionID) : nil
    }

    /// The reply to a line longer than `limit` bytes, sent before the connection is closed.
    public func reply(toLineLongerThan limit: Int) -> Envelope? {
        acknowledges
            ? .ack(
                .invalid, messageID: nil, message: "line longer than \(limit) bytes; closing the connection",
                versionID: versionID) : nil
    }

    /// The reply to a connection refused before its first envelope was read (plaintext where
    /// only TLS is taken): Ack `rejected`, without a `messageID`, saying why.
    public func reply(refusingConnection reason: String) -> Envelope? {
        acknowledges ? .ack(.rejected, messageID: nil, message: reason, versionID: versionID) : nil
    }

    /// The reply to an envelope the receiver could not store (a database error): Ack `failed`,
    /// which tells the sender to try again, when the envelope asked for an Ack.
    public func reply(toUnstored envelope: Envelope, because reason: String) -> Envelope? {
        envelope.messageID.map {
            .ack(.failed, messageID: $0, message: "the receiver could not store it: \(reason)", versionID: versionID)
        }
    }
}
