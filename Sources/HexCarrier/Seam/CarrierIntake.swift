import HexKit

/// What hexd does with what a carrier's devices send and with the devices it finds, one rule for
/// every kind of peer: the accept policy, blocks and budgets, the store, the events, the arrivals
/// (notifications, the page, `--on-receive`) and the peer directory. The daemon's `Intake` is it.
package protocol CarrierIntake: Sendable {
    /// The store's trust and budgets, as a carrier asks them.
    var store: any CarrierStore { get }
    /// The daemon's events (`hexctl watch`, the page).
    var events: EventLog { get }
    /// Acts on `envelopes` from one sender, in order (`proof` says who it is; a sender without
    /// one is accounted by its IP `address`; `remote` names it in the log; `attachedBytes` of files
    /// came with a Store's hex), and returns each one's outcome once what they stored is committed.
    func take(_ envelopes: [Envelope], proof: SenderProof, from remote: String, address: String, attachedBytes: Int)
        async -> [Result<ReceiveOutcome, any Error>]
    /// Whether `id` is a peer paired with its key `fingerprint` (any case). A key pinned on first
    /// use is no pairing, and a store that cannot be read knows no one.
    func hasPaired(_ id: String, byKey fingerprint: String) async -> Bool
    /// Tells the person (notifications, the page) that `offer` from `name`, answered by its `key`
    /// (`hexctl pair --accept`), waits for them.
    func offerWaiting(name: String, key: String, offer: WaitingOffer)
    /// Tells the person that the device `name` (`key`) asks to pair, showing `code`.
    func pairRequested(name: String, key: String, code: String)
    /// A device of a carrier's was found: the directory remembers it, as a peer seen, under `id`,
    /// and what the outbox holds for it falls due (as `deviceHeard` makes it).
    func deviceFound(id: String, name: String, versionID: String, address: String) async
    /// A device of a carrier's was heard again: what the outbox holds for it falls due.
    func deviceHeard(id: String) async
}

extension CarrierIntake {
    /// Keeps `envelope`, which a sender with no identity beyond its connection sent (a stranger,
    /// accounted by its IP `address`; `remote` names it in the log), with `attachedBytes` of
    /// files that came with its hex; whether it is kept (stored now, or before).
    package func keepFromStranger(_ envelope: Envelope, from remote: String, address: String, attachedBytes: Int)
        async -> Bool
    {
        switch await take([envelope], proof: .none, from: remote, address: address, attachedBytes: attachedBytes).first
        {
        case .success(.stored), .success(.duplicate): true
        default: false
        }
    }

    /// Why `bytes` from a stranger at `address` are not taken now (the accept policy, the budgets);
    /// nil when they are. The disk's room is the downloads folder's to say.
    package func strangerRefusal(of bytes: Int64, from address: String) async -> String? {
        do {
            switch try await store.admission(of: "", proof: .none, from: address, bytes: Int(clamping: bytes)) {
            case .admitted: return nil
            case .refused(let outcome), .askPerson(let outcome): return outcome.explanation
            }
        } catch {
            return "\(error)"
        }
    }
}

/// The store as a carrier asks it: the budgets' admission of what a device offers, and the trust
/// of its devices (a pairing kept, read and ended). The daemon's `HexService` is it.
package protocol CarrierStore: Sendable {
    /// Whether `bytes` from `sender` (proved by `proof`, at `address`) are taken now.
    func admission(of sender: String, proof: SenderProof, from address: String, bytes: Int) async throws
        -> HexManager.Admission
    /// Keeps `uuid` paired with the certificate `fingerprint`.
    func pair(peer uuid: String, fingerprint: String) async throws -> PeerPin
    /// The key pinned or paired to `uuid`; nil when none.
    func pin(forPeer uuid: String) async throws -> PeerPin?
    /// Forgets the key of `uuid` (`label` names it in the error when none is kept).
    func resetTrust(peer uuid: String, label: String) async throws -> PeerPin
    /// The version `uuid` spoke when last seen; nil for a device never seen.
    func knownVersion(of uuid: String) async throws -> String?
}

/// Whether hexd is visible now (`hexctl visibility`), as a carrier announcing itself asks it.
package protocol CarrierVisibility: Sendable {
    /// Whether hexd is visible now.
    var isVisible: Bool { get async }
}
