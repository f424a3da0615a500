import HexEngine
import HexKit
import HexNet
import HexTLS

/// Hexes to paired KDE Connect devices: each as the shares `KDEConnectShare.shares(of:)` makes
/// (a lone link as a `url`, which the device opens; anything else as a `text`), written on the
/// device's link. KDE Connect confirms nothing: a share written in the device's TLS connection is
/// delivered as far as hexd can know.
extension KDEConnectCarrier {
    /// A share written to a device.
    struct Delivery: Sendable {
        let label: String
        let address: IPAddress
        let certificate: Fingerprint
        /// The packets written.
        let packets: Int
    }

    /// Refuses a send to `peerID` when the device is not paired here: it would refuse the shares.
    /// - Throws: `SendError.refused`.
    func refuseUnlessPaired(_ peerID: String) async throws(SendError) {
        guard await isPaired(peerID: peerID) else {
            throw .refused(
                "\(peerID) is a KDE Connect device not paired with hexd, which takes nothing from it: pair first "
                    + "(hexctl pair NAME, or pair from the device)")
        }
    }

    /// Writes `shares` to the paired device `peerID`, on its link.
    /// - Throws: `SendError.refused` when there is nothing to share or the device is not paired;
    ///   `.undelivered` when it has no link up (away) or its link ended first.
    func send(_ shares: [KDEConnectShare], to peerID: String) async throws(SendError) -> Delivery {
        guard !shares.isEmpty else {
            throw .refused("a hex with neither a description nor a link shows nothing on a KDE Connect device")
        }
        try await refuseUnlessPaired(peerID)
        guard let device = linkedDevices.first(where: { $0.peerID == peerID }) else {
            throw .undelivered("\(peerID) is away: no KDE Connect link with it")
        }
        let id = Self.milliseconds()
        guard await device.outgoing.write(shares.map { Array($0.encoded(id: id).dropLast()) }) else {
            throw .undelivered("\(device.label): its link ended before the share was written")
        }
        return Delivery(
            label: device.label, address: device.address, certificate: device.certificate, packets: shares.count)
    }
}
