import HexEngine
import HexKit
import HexTLS

/// What sending needs of a carrier of another protocol (LocalSend, KDE Connect): the form of its
/// devices' IDs, how a text names one of them, what it refuses, and one delivery. `SendService`
/// asks each carrier of `ForeignCarriers.entries` in turn, and switches on none.
protocol SendingCarrier: Sendable {
    /// Whether `peerID` has this carrier's ID form (`localsend:…`, `kdeconnect:…`).
    static func owns(_ peerID: String) -> Bool
    /// How long one attempt at a send to one of its devices may take when its caller waits `asked`.
    static func attemptTimeout(asked: Duration) -> Duration
    /// The device listed now that `text` names (its name, its ID or a unique prefix of it), as a
    /// send's target; nil when none does.
    func target(named text: String) async -> SendService.Target?
    /// Refuses now a send to `peerID` that this carrier will never make.
    /// - Throws: `SendError.refused`; `.undelivered` when it cannot tell now.
    func refuseUnlessAllowed(_ peerID: String) async throws(SendError)
    /// Delivers a hex or an alert to the device `peerID` once.
    /// - Throws: `SendError.undelivered` (worth trying again) or `.refused` (never).
    func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> SendService.Receipt
    /// Sends the files at `paths` (absolute) themselves to the device `peerID`; `progress` hears
    /// the file being sent, the bytes sent of all, and their total.
    /// - Throws: `SendError`, as `deliver` does; `.refused` for a path that is no readable file.
    func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery
}

/// What a device took of the files sent to it.
struct FilesDelivery: Sendable {
    /// The device's name, and where it is.
    let label: String
    /// How many of the files it took, and their bytes.
    let files: Int
    let bytes: Int64
    /// The certificate it proved; nil when none did (plain HTTP).
    let certificate: Fingerprint?
    /// What the report of the send says, given the bytes' size as text.
    let report: @Sendable (_ size: String) -> String
}
