import HexCarrier
import HexKit
import HexNet

/// What `hexctl status` and `hexctl peers` say of Quick Share.
extension QuickShareCarrier: Carrier {
    package static let name = "Quick Share"
    package static let kind = PeerKind.quickshare
    /// What an offer's key starts with: its number follows, counted from hexd's start.
    static let offerKeyPrefix = "quickshare-offer:"

    /// A receiver by its ID; an offer waiting by its key.
    package static func namesake(_ id: String) -> Namesake {
        id.hasPrefix(offerKeyPrefix) ? .offer(of: name, id) : .device(of: name, id)
    }

    package func status() async -> CarrierStatus {
        CarrierStatus(
            port: port, identity: String(decoding: endpointID, as: UTF8.self), identityName: "endpoint ID",
            counts: [
                .init("receivers", receivers.receivers.count, "receiver", "receivers", "listed"),
                .init("offersWaiting", offersWaiting.count, "offer", "offers", "waiting"),
            ], notes: (portNote.map { [$0] } ?? []) + [await nudge.note])
    }

    /// The receivers found, by name, then the offers of files waiting for the person's yes.
    package func listed(at now: ContinuousClock.Instant) -> [ListedDevice] {
        let found = receivers.receivers.values.sorted { $0.label < $1.label }.compactMap { receiver -> ListedDevice? in
            guard let id = QuickShareID.of(endpointID: receiver.endpointID) else { return nil }
            return ListedDevice(
                id: id, name: receiver.label, endpoint: Endpoint(receiver.address, port: receiver.port).description,
                addresses: [receiver.address.description], lastHeard: now - receiver.lastHeard, keyless: true,
                paired: false,
                deviceType: "\(receiver.deviceType)")
        }
        let offers = offersWaiting.map { offer in
            ListedDevice(
                id: offer.key, name: offer.name, endpoint: "", addresses: [], lastHeard: .zero, keyless: true,
                paired: false,
                pairing: ("", true), offer: Self.waiting(offer.what))
        }
        return found + offers
    }
}
