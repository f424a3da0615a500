import HexEngine
import HexKit
import HexTLS

/// What sending needs of a carrier of another protocol (LocalSend, KDE Connect): the form of its
/// devices' IDs, how a text names one of them, what it refuses, and one delivery. `SendService`
/// asks each carrier of `ForeignCarriers.entries` in turn, and switches on none.
package protocol SendingCarrier: Sendable {
    /// The forms of its devices' IDs (`localsend:…`, `kdeconnect:…`), which the daemon registers.
    static var idForms: [PeerIDForm] { get }
    /// How long one attempt at a send to one of its devices may take when its caller waits `asked`.
    static func attemptTimeout(asked: Duration) -> Duration
    /// The device listed now that `text` names (its name, its ID or a unique prefix of it), as a
    /// send's target; nil when none does.
    func target(named text: String) async -> CarrierTarget?
    /// Refuses now a send to `peerID` that this carrier will never make.
    /// - Throws: `SendError.refused`; `.undelivered` when it cannot tell now.
    func refuseUnlessAllowed(_ peerID: String) async throws(SendError)
    /// Delivers a hex or an alert to the device `peerID` once.
    /// - Throws: `SendError.undelivered` (worth trying again) or `.refused` (never).
    func deliver(_ envelope: Envelope, to peerID: String, timeout: Duration) async throws(SendError)
        -> CarrierReceipt
    /// Sends the files at `paths` (absolute) themselves to the device `peerID`; `progress` hears
    /// the file being sent, the bytes sent of all, and their total.
    /// - Throws: `SendError`, as `deliver` does; `.refused` for a path that is no readable file.
    func sendFiles(
        _ paths: [String], to peerID: String, progress: @escaping @Sendable (String, Int64, Int64) async -> Void
    ) async throws(SendError) -> FilesDelivery
}

/// What a device took of the files sent to it.
package struct FilesDelivery: Sendable {
    /// The device's name, and where it is.
    package let label: String
    /// How many of the files it took, and their bytes.
    package let files: Int
    package let bytes: Int64
    /// The certificate it proved; nil when none did (plain HTTP).
    package let certificate: Fingerprint?
    /// What the report of the send says, given the bytes' size as text.
    package let report: @Sendable (_ size: String) -> String

    package init(
        label: String, files: Int, bytes: Int64, certificate: Fingerprint?,
        report: @escaping @Sendable (_ size: String) -> String
    ) {
        (self.label, self.files, self.bytes, self.certificate, self.report) = (label, files, bytes, certificate, report)
    }
}

/// A device of a carrier's that a text named, as a send's target.
package struct CarrierTarget: Sendable, Equatable {
    /// Its ID, in its carrier's form (`quickshare:…`).
    package var peerID: String
    /// The device as the person reads it.
    package var label: String

    package init(peerID: String, label: String) {
        (self.peerID, self.label) = (peerID, label)
    }
}

/// A send a carrier's device took.
package struct CarrierReceipt: Sendable {
    /// The device as the person reads it.
    package var peer: String
    /// The envelope's id.
    package var messageID: String?
    package var delivery: EnvelopeDelivery

    package init(peer: String, messageID: String?, delivery: EnvelopeDelivery) {
        (self.peer, self.messageID, self.delivery) = (peer, messageID, delivery)
    }
}

extension SendingCarrier {
    /// Whether `peerID` has one of this carrier's ID forms.
    package static func owns(_ peerID: String) -> Bool { idForms.contains { $0.owns(peerID) } }
}
