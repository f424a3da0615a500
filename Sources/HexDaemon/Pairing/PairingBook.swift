import HexCarrier
import HexKit
import HexTLS

/// The pairings under way (Protocol.md, section 12), in memory: requests received, waiting for
/// the initiator's nonce and then for this side's user; and requests sent, waiting for the other
/// side's user. Pure bookkeeping: the pairing service feeds it steps and the clock.
///
/// Entries are keyed by the key that proved itself (one key, one device ID, one entry) and last
/// for `lifetime`. Requests received are bounded apart for peers known before (a key pinned here,
/// or a peer announced before a flood began) and for strangers, so a flood of strangers never
/// takes a known peer's place: each class holds at most `capacity`, the oldest making room, and a
/// stranger's source address at most `perAddress`. Requests sent hold at most `capacity` too.
struct PairingBook {
    /// A request from a peer.
    struct Incoming: Sendable, Equatable {
        var peerUUID: String
        var name: String
        var key: Fingerprint
        /// The SHA-256 of the initiator's nonce, 64 hex digits.
        var commitment: String
        var ourNonce: [UInt8]
        /// Set once the initiator revealed the nonce it committed to; only then may the user accept.
        var code: String?
        var expires: ContinuousClock.Instant
        /// The address it came from.
        var source: String
        /// From a peer known before (see `PairingAdmission`): never pushed out by strangers.
        var isKnown: Bool
    }

    /// A request this daemon sent, its nonces exchanged.
    struct Outgoing: Sendable, Equatable {
        var peerUUID: String
        var name: String
        var key: Fingerprint
        var code: String
        var expires: ContinuousClock.Instant
    }

    /// Long enough to walk to the other machine and type a command.
    static let lifetime = Duration.seconds(300)
    static let capacity = 16
    /// A stranger's requests under way from one source address.
    static let perAddress = 2

    private(set) var incoming: [Fingerprint: Incoming] = [:]
    private(set) var outgoing: [Fingerprint: Outgoing] = [:]

    /// Records a request (replacing an earlier one from the same key), within the bounds.
    /// - Throws: `PairingError.tooManyFromAddress` for a stranger's request past `perAddress`.
    mutating func received(
        from key: Fingerprint, uuid: String, name: String, commitment: String, ourNonce: [UInt8], source: String,
        isKnown: Bool,
        at now: ContinuousClock.Instant
    ) throws(PairingError) {
        expire(at: now)
        let others = incoming.values.filter { $0.key != key && $0.isKnown == isKnown }
        if !isKnown, others.filter({ $0.source == source }).count >= Self.perAddress {
            throw .tooManyFromAddress(source)
        }
        if others.count >= Self.capacity, let oldest = others.min(by: { $0.expires < $1.expires }) {
            incoming[oldest.key] = nil
        }
        incoming[key] = Incoming(
            peerUUID: uuid, name: name, key: key, commitment: commitment, ourNonce: ourNonce,
            code: nil,
            expires: now + Self.lifetime, source: source, isKnown: isKnown)
    }

    /// Checks the initiator's nonce against its commitment and works out the code.
    /// - Throws: `PairingError` when there is no request from this key, or the nonce does not
    ///   match (the request is then dropped: a second guess gets nothing).
    mutating func revealed(nonce: [UInt8], by key: Fingerprint, ownKey: Fingerprint, at now: ContinuousClock.Instant)
        throws(PairingError) -> Incoming
    {
        expire(at: now)
        guard var request = incoming[key], request.code == nil else { throw .noRequest }
        guard PairingCode.commitment(to: nonce) == request.commitment,
            let code = PairingCode.verificationCode(
                initiator: key, responder: ownKey, initiatorNonce: nonce, responderNonce: request.ourNonce)
        else {
            incoming[key] = nil
            throw .commitmentMismatch
        }
        request.code = code
        incoming[key] = request
        return request
    }

    /// Records a request this daemon sent, its code known.
    mutating func sent(_ request: Outgoing, at now: ContinuousClock.Instant) {
        expire(at: now)
        Self.makeRoom(for: request.key, in: &outgoing, expiring: \.expires)
        outgoing[request.key] = request
    }

    /// The revealed request from the peer a user means (its exact name, ignoring case, or its
    /// UUID or a unique prefix of it), still open. A name that strangers give too means the one
    /// peer known before that gives it, if there is one.
    func request(matching text: String, at now: ContinuousClock.Instant) throws(LookupError) -> Incoming {
        let open = incoming.values.filter { $0.code != nil && $0.expires > now }
        let named = open.filter { $0.name.lowercased() == text.lowercased() }
        let byName = named.count > 1 && named.filter(\.isKnown).count == 1 ? named.filter(\.isKnown) : named
        let matches =
            byName.isEmpty && !text.isEmpty ? open.filter { $0.peerUUID.hasPrefix(text.uppercased()) } : byName
        guard let match = matches.first else { throw .noPairing(text) }
        guard matches.count == 1 else { throw .ambiguousPeer(text, matches: matches.count) }
        return match
    }

    /// Ends the request received from `key`: accepted.
    mutating func closeIncoming(_ key: Fingerprint) {
        incoming[key] = nil
    }

    /// Takes the request this daemon sent to `key`, when `uuid` and `code` are the ones it knows.
    /// - Throws: `PairingError.noRequest`, or `.codeMismatch` (the request is then dropped).
    mutating func accepted(by key: Fingerprint, uuid: String, code: String, at now: ContinuousClock.Instant)
        throws(PairingError) -> Outgoing
    {
        expire(at: now)
        guard let request = outgoing[key], request.peerUUID == uuid else { throw .noRequest }
        outgoing[key] = nil
        guard request.code == code else { throw .codeMismatch }
        return request
    }

    /// Forgets every pairing under way with a peer UUID (its trust was reset).
    mutating func forget(peerUUID uuid: String) {
        incoming = incoming.filter { $0.value.peerUUID != uuid }
        outgoing = outgoing.filter { $0.value.peerUUID != uuid }
    }

    /// The pairing under way with a peer UUID, for display: its code and who must accept.
    func pending(for uuid: String, at now: ContinuousClock.Instant) -> (code: String, awaitingUs: Bool)? {
        if let request = incoming.values.first(where: { $0.peerUUID == uuid && $0.expires > now }),
            let code = request.code
        {
            return (code, true)
        }
        return outgoing.values.first { $0.peerUUID == uuid && $0.expires > now }.map { ($0.code, false) }
    }

    /// Drops the entry expiring first when `key` is new and `entries` is full.
    private static func makeRoom<Entry>(
        for key: Fingerprint, in entries: inout [Fingerprint: Entry],
        expiring expires: KeyPath<Entry, ContinuousClock.Instant>
    ) {
        guard entries[key] == nil, entries.count >= capacity,
            let first = entries.min(by: { $0.value[keyPath: expires] < $1.value[keyPath: expires] })
        else { return }
        entries[first.key] = nil
    }

    private mutating func expire(at now: ContinuousClock.Instant) {
        incoming = incoming.filter { $0.value.expires > now }
        outgoing = outgoing.filter { $0.value.expires > now }
    }
}

/// Why a pairing step was refused, as the peer is told.
enum PairingError: Error, Equatable, CustomStringConvertible {
    /// No request (or no longer: they last `PairingBook.lifetime`) from or to this key.
    case noRequest
    /// The initiator's nonce is not the one it committed to.
    case commitmentMismatch
    /// A stranger's request from an address that has `PairingBook.perAddress` under way.
    case tooManyFromAddress(String)
    /// Strangers asked faster than `PairingAdmission` admits: a flood is under way.
    case busy
    /// The accepting side showed another code than this side did.
    case codeMismatch

    var description: String {
        switch self {
        case .noRequest: "no pairing request is under way with this key (they last \(PairingBook.lifetime))"
        case .commitmentMismatch: "the nonce revealed is not the one committed to; the request is dropped"
        case .tooManyFromAddress(let source):
            "\(source) has \(PairingBook.perAddress) pairing requests under way already"
        case .busy: "too many pairing requests from unknown peers right now; try again in a few seconds"
        case .codeMismatch: "the codes differ; the request is dropped (someone may be in the middle)"
        }
    }
}
