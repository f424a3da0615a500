import HexKit

/// A carrier's trust flow as the person drives it (`hexctl pair`, `pair --accept`, `pair --decline`,
/// `unpair`) for a device of its protocol: a hexd peer's pairing, a LocalSend device's offer waiting
/// for the person, a KDE Connect device's pairing. `ControlHandler` asks each in turn, and switches
/// on none.
package protocol TrustingCarrier: Sendable {
    /// The kind of peer its devices are.
    static var kind: PeerKind { get }
    /// What a text that names `id`, one of its devices, is in the person's words.
    static func namesake(_ id: String) -> Namesake
    /// The ID of what `text` names (by its name, its ID or a unique prefix of it) that the person
    /// can act on by `step` now through this carrier; nil when nothing does.
    /// - Throws: `LookupError` when `text` names several, and the carrier says so.
    func trustSubject(named text: String, for step: TrustStep) async throws(LookupError) -> String?
    /// Takes `step` for `peerID`, which `trustSubject` named.
    /// - Throws: `TrustRefusal` in the person's words; `LookupError` when it is gone; a store error.
    func trust(_ step: TrustStep, _ peerID: String) async throws -> TrustOutcome
    /// Ends the pairing with `peerID`, a device of this carrier's kind, on both sides; nil when
    /// the certificate the store keeps is all there is to it (the store's unpairing ends it).
    /// - Throws: `LookupError.noPin` when it is not paired; a store error.
    func unpair(_ peerID: String, label: String) async throws -> TrustOutcome?
}

/// What the person does about a device's trust.
package enum TrustStep: Sendable {
    /// Asks the device to pair (`hexctl pair NAME`).
    case request
    /// Says yes to what the device asks (`--accept`).
    case accept
    /// Says no to it (`--decline`).
    case decline
}

/// Where a trust step left a device, in plain values (the control layer reports it).
package struct TrustOutcome: Sendable {
    package let peerID: String
    package let name: String
    /// The certificate now trusted, or forgotten by an unpairing; nil when none.
    package let key: String?
    /// How its key is trusted now; nil when nothing is pinned to it.
    package let trust: SenderTrust?
    /// The verification code both sides show, while the device is to answer hexd's request.
    package var code: String?
    package var awaitingDevice = false
    /// What the device offered, when the step answered an offer (LocalSend, Quick Share), and
    /// whether it was let in.
    package var offer: String?
    package var accepted: Bool?

    package init(
        peerID: String, name: String, key: String?, trust: SenderTrust?, code: String? = nil,
        awaitingDevice: Bool = false, offer: String? = nil, accepted: Bool? = nil
    ) {
        (self.peerID, self.name, self.key, self.trust) = (peerID, name, key, trust)
        (self.code, self.awaitingDevice, self.offer, self.accepted) = (code, awaitingDevice, offer, accepted)
    }
}

/// A trust step the carrier cannot take now, in the person's words.
package struct TrustRefusal: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) { self.description = description }
}
