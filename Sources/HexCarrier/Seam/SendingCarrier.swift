import HexEngine
import HexKit
import HexNet

/// What sending needs of a carrier, hexd's own envelope protocol among them: the form of its
/// devices' IDs, how a text names one of them, what it refuses, and one delivery. `SendService`
/// asks each carrier in turn, and switches on none. A carrier of another protocol gets most of
/// this from `DeviceCarrier`.
package protocol SendingCarrier: Sendable {
    /// The protocol as people know it (`Quick Share`).
    static var name: String { get }
    /// The kind of peer its devices are.
    static var kind: PeerKind { get }
    /// The forms of its devices' IDs (`localsend:…`, `kdeconnect:…`), which the daemon registers.
    static var idForms: [PeerIDForm] { get }
    /// Whether `peerID` is an ID of one of its devices, in hexd's spelling.
    static func owns(_ peerID: String) -> Bool
    /// What a text that names `id`, one of its devices, is in the person's words (`the hexd peer 6F96…`).
    static func namesake(_ id: String) -> Namesake
    /// How long one attempt at a send to one of its devices may take when its caller waits `asked`.
    static func attemptTimeout(asked: Duration) -> Duration
    /// The device listed now that `text` names (its name, its ID or a unique prefix of it), as a
    /// send's target; nil when none does.
    /// - Throws: `LookupError` when `text` names several of its devices, and the carrier says so.
    func target(named text: String) async throws(LookupError) -> CarrierTarget?
    /// Whether its devices may be named by an address the person types (`HOST:PORT`): a send to
    /// one stays at that address, whoever is there.
    static var takesAddresses: Bool { get }
    /// The device at `address` as a send's target; nil when the carrier takes no address.
    func target(at address: Endpoint) async -> CarrierTarget?
    /// `id`, one of its devices' (`owns`) that no carrier lists now, as a send's target; nil when
    /// nothing says it is a device a send may wait for.
    /// - Throws: a store error.
    func target(unlisted id: String) async throws -> CarrierTarget?
    /// Refuses now a send to `target` that this carrier will never make, or else what its first
    /// attempt may take from this look (nil when the device is away now: no reason to refuse).
    /// - Parameter legacy: the person asked for the original app's dialect (`--legacy`).
    /// - Throws: `SendError.refused`.
    func plan(_ target: CarrierTarget, legacy: Bool) async throws(SendError) -> SendPlan?
    /// Delivers a hex or an alert once.
    /// - Throws: `SendError.undelivered` (worth trying again) or `.refused` (never).
    func deliver(_ send: CarrierSend) async throws(SendError) -> CarrierReceipt
}

extension SendingCarrier {
    package static func owns(_ peerID: String) -> Bool { idForms.contains { $0.owns(peerID) } }

    package static func namesake(_ id: String) -> Namesake { .device(of: name, id) }
}

/// A send's destination as a carrier reads it.
package struct CarrierTarget: Sendable, Equatable {
    /// Its ID, in its carrier's form (`quickshare:…`); nil for an address no known peer is at.
    package var peerID: String?
    /// The address the person typed, which the send stays at; nil for a device named otherwise.
    package var address: Endpoint?
    /// The device as the person reads it.
    package var label: String

    package init(peerID: String?, address: Endpoint? = nil, label: String) {
        (self.peerID, self.address, self.label) = (peerID, address, label)
    }
}

/// What a carrier's `plan` found for a send, handed to its first attempt (`CarrierSend.plan`); the
/// carrier alone reads it.
package struct SendPlan: Sendable {
    package let value: any Sendable

    package init(_ value: any Sendable) { self.value = value }
}

/// One delivery, as the outbox or a `--no-queue` send asks it of a carrier.
package struct CarrierSend: Sendable {
    package var envelope: Envelope
    /// `envelope` as the outbox keeps it, written as it is where the carrier writes envelopes.
    package var encoded: [UInt8]?
    package var target: CarrierTarget
    /// Send only what the original app understood (`--legacy`).
    package var legacy: Bool
    /// Wait for the device's answer; false returns once the envelope is written, where the carrier
    /// can tell.
    package var wait: Bool
    package var timeout: Duration
    /// What the carrier's `plan` found for this send just before, for its first attempt.
    package var plan: SendPlan?

    package init(
        _ envelope: Envelope, encoded: [UInt8]? = nil, to target: CarrierTarget, legacy: Bool, wait: Bool = true,
        timeout: Duration, plan: SendPlan? = nil
    ) {
        (self.envelope, self.encoded, self.target, self.legacy) = (envelope, encoded, target, legacy)
        (self.wait, self.timeout, self.plan) = (wait, timeout, plan)
    }
}

/// A send a carrier's device took.
package struct CarrierReceipt: Sendable {
    /// The device as the person reads it.
    package var peer: String
    /// The envelope's id; nil when sent to a legacy peer.
    package var messageID: String?
    package var delivery: EnvelopeDelivery
    /// What the delivery proved of the device's key that the store does not hold yet, for the
    /// caller to keep with the rest of what the send changes (one store call).
    package var keyProof: KeyProof?

    package init(peer: String, messageID: String?, delivery: EnvelopeDelivery, keyProof: KeyProof? = nil) {
        (self.peer, self.messageID, self.delivery, self.keyProof) = (peer, messageID, delivery, keyProof)
    }
}

/// A key a delivery proved, to be kept: pinned on first use, or a pin moved from the UUID a peer
/// had before its ID came from its key.
package enum KeyProof: Sendable, Equatable {
    case firstUse(peer: String, fingerprint: String)
    case moved(from: String, to: String)
}
