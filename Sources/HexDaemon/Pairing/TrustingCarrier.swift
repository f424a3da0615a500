/// A carrier's trust flow as the person drives it (`hexctl pair`, `pair --accept`, `pair --decline`,
/// `unpair`) for a device of its protocol: a LocalSend device's offer waiting for the person, a
/// KDE Connect device's pairing. `ControlHandler` asks each carrier in turn, and switches on none.
protocol TrustingCarrier: SendingCarrier {
    /// The ID of what `text` names (by its name, its ID or a unique prefix of it) that the person
    /// can act on by `step` now through this carrier; nil when nothing does.
    func trustSubject(named text: String, for step: TrustStep) async -> String?
    /// Takes `step` for `peerID`, which `trustSubject` named.
    /// - Throws: `TrustRefusal` in the person's words; `LookupError` when it is gone; a store error.
    func trust(_ step: TrustStep, _ peerID: String) async throws -> TrustOutcome
    /// Ends the pairing with `peerID`, a device of this carrier's (`owns`), on both sides; nil when
    /// the certificate the store keeps is all there is to it (the store's unpairing ends it).
    /// - Throws: `LookupError.noPin` when it is not paired; a store error.
    func unpair(_ peerID: String, label: String) async throws -> TrustOutcome?
}

/// What the person does about a device's trust.
enum TrustStep: Sendable {
    /// Asks the device to pair (`hexctl pair NAME`).
    case request
    /// Says yes to what the device asks (`--accept`).
    case accept
    /// Says no to it (`--decline`).
    case decline
}

/// Where a trust step left a device, in plain values (the control layer reports it).
struct TrustOutcome: Sendable {
    let peerID: String
    let name: String
    /// The certificate now trusted, or forgotten by an unpairing; nil when none.
    let key: String?
    let paired: Bool
    /// The verification code both sides show, while the device is to answer hexd's request.
    var code: String?
    var awaitingDevice = false
    /// What the device offered, when the step answered an offer (LocalSend, Quick Share), and
    /// whether it was let in.
    var offer: String?
    var accepted: Bool?
}

/// A trust step the carrier cannot take now, in the person's words.
struct TrustRefusal: Error, CustomStringConvertible {
    let description: String
}
