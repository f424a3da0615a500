import HexCarrier
import HexKit

/// What `hexctl status` and `hexctl peers` say of KDE Connect.
extension KDEConnectCarrier: Carrier {
    package static let name = "KDE Connect"
    package static let kind = PeerKind.kdeconnect

    package func status() -> CarrierStatus {
        let (devices, paired) = linkedCounts
        return CarrierStatus(
            port: port, identity: own.deviceID, identityName: "device ID",
            counts: [
                .init("devices", devices, "device", "devices", "linked"), .init("paired", paired, "paired", "paired"),
            ], notes: portNote.map { [$0] } ?? [])
    }

    /// The devices with a link up, the latest linked first, each with the pairing under way.
    package func listed(at now: ContinuousClock.Instant) -> [ListedDevice] {
        linkedDevices.map { device in
            let (paired, pending) = (devices.isPaired(device.key), pendingPairing(of: device))
            return ListedDevice(
                id: device.peerID, name: device.identity.name, versionID: String(device.version),
                endpoint: device.address.description, addresses: [device.address.description],
                lastHeard: now - device.linkedAt, fingerprint: device.certificate.description,
                paired: paired, pairable: !paired && pending == nil, pairing: pending,
                deviceType: device.identity.deviceType.rawValue)
        }
    }
}
