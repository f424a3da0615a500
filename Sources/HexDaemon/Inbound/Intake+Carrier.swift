import HexCarrier
import HexKit

extension Intake: CarrierIntake {
    func keepFromStranger(_ envelope: Envelope, from remote: String, address: String, attachedBytes: Int) async
        -> Bool
    {
        switch await take([envelope], proof: .none, from: remote, address: address, attachedBytes: attachedBytes).first
        {
        case .success(.stored), .success(.duplicate): true
        default: false
        }
    }

    func strangerRefusal(of bytes: Int64, from address: String) async -> String? {
        do {
            switch try await service.admission(of: "", proof: .none, from: address, bytes: Int(clamping: bytes)) {
            case .admitted: return nil
            case .refused(let outcome), .askPerson(let outcome): return outcome.explanation
            }
        } catch {
            return "\(error)"
        }
    }

    func offerWaiting(name: String, key: String, what: String) {
        arrivals.publish([.offerWaiting(name: name, peerUUID: key, what: what)])
    }

    func deviceFound(id: String, name: String, versionID: String, address: String) async {
        await directory.arrivedElsewhere(id: id, name: name, versionID: versionID, address: address)
    }
}
