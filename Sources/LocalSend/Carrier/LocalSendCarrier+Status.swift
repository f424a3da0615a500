import HexCarrier
import HexKit
import HexNet
import LocalSendCore

/// What `hexctl status` and `hexctl peers` say of LocalSend.
extension LocalSendCarrier: Carrier {
    package static let name = "LocalSend"
    package static let kind = PeerKind.localsend

    package func status() -> CarrierStatus {
        CarrierStatus(
            port: port, identity: fingerprint, identityName: "fingerprint",
            counts: [.init("devices", devices.count, "device", "devices", "listed")], notes: portNote.map { [$0] } ?? []
        )
    }

    /// The devices listed, each with the offer it has waiting; then the offers of devices whose
    /// announcement hexd did not hear, listed by the offer alone. Their trust is the store's pin.
    package func listed(at now: ContinuousClock.Instant) -> [ListedDevice] {
        let found = devices.map { device in
            let offer = offerWaiting(matching: device.peerID)
            return ListedDevice(
                id: device.peerID, name: device.description.alias, versionID: device.description.version,
                endpoint: Endpoint(device.address, port: device.description.port ?? LocalSendDevice.defaultPort)
                    .description,
                addresses: [device.address.description], lastHeard: now - device.lastSeen,
                fingerprint: device.isPlainHTTP ? nil : device.fingerprint, paired: nil,
                pairing: offer.map { _ in ("", true) }, offer: offer.map { Self.waiting($0.what) },
                deviceType: device.description.deviceType.rawValue,
                deviceModel: device.description.deviceModel)
        }
        let listed = Set(found.map(\.id))
        let offers = offersWaiting.filter { !listed.contains($0.request.key) }.map { offer, address in
            ListedDevice(
                id: offer.key, name: offer.name, endpoint: address, addresses: [address], lastHeard: .zero, paired: nil,
                pairing: ("", true), offer: Self.waiting(offer.what))
        }
        return found + offers
    }
}
