import HexCarrier
import HexKit

extension Intake: CarrierIntake {
    var store: any CarrierStore { service }

    func offerWaiting(name: String, key: String, offer: WaitingOffer) {
        arrivals.publish([.offerWaiting(name: name, peerUUID: key, offer: offer)])
    }

    func pairRequested(name: String, key: String, code: String) {
        arrivals.publish([.pairRequest(name: name, peerUUID: key, code: code)])
    }

    func deviceFound(id: String, name: String, versionID: String, address: String) async {
        await directory.arrivedElsewhere(id: id, name: name, versionID: versionID, address: address)
    }

    func deviceHeard(id: String) async {
        await directory.heardFromElsewhere(id: id)
    }
}
