import HexEngine
import HexKit
import HexNet
import HexTLS

/// A carrier of another protocol (LocalSend, KDE Connect, Quick Share) as sending sees it: its
/// devices are named by their IDs alone (no address, no dialect), each delivery stands alone, and
/// files go to them themselves rather than as links in a hex.
package protocol DeviceCarrier: SendingCarrier {
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

extension DeviceCarrier {
    /// A device's protocol has no address a person types.
    package static var takesAddresses: Bool { false }

    package func target(at address: Endpoint) async -> CarrierTarget? { nil }

    /// A device's full ID is what its device proves whenever it is back (a LocalSend device's
    /// fingerprint; a KDE Connect device's certificate, once paired): a send to it may wait.
    package func target(unlisted id: String) async throws -> CarrierTarget? {
        CarrierTarget(peerID: id, label: id)
    }

    package func plan(_ target: CarrierTarget, legacy: Bool) async throws(SendError) -> SendPlan? {
        guard !legacy else { throw .refused("--legacy is hexd's own protocol; \(target.label) is not hexd") }
        try await refuseUnlessAllowed(try Self.deviceID(of: target))
        return nil
    }

    package func deliver(_ send: CarrierSend) async throws(SendError) -> CarrierReceipt {
        _ = try await plan(send.target, legacy: send.legacy)
        return try await deliver(send.envelope, to: try Self.deviceID(of: send.target), timeout: send.timeout)
    }

    /// The ID of the device `target` names.
    /// - Throws: `SendError.refused` for a target that names none of this carrier's devices.
    private static func deviceID(of target: CarrierTarget) throws(SendError) -> String {
        guard let id = target.peerID, owns(id) else { throw .refused("\(target.label) is not a \(name) device") }
        return id
    }
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
