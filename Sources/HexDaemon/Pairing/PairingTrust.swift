import HexCarrier
import HexKit

/// hexd's own pairing (Protocol.md, section 12) as a trust flow beside the carriers': a peer in the
/// table asked to pair, a peer's request accepted or declined. Made for one request of the person,
/// whose deadline it carries: a step waits for the peer's answer at most `timeout`.
struct PairingTrust: TrustingCarrier {
    static let kind = PeerKind.hexd

    let pairing: PairingService
    let directory: PeerDirectory
    let timeout: Duration

    static func namesake(_ id: String) -> Namesake { .hexdPeer(id) }

    /// For a request, the peer in the table `text` names; for an answer, the peer whose request
    /// waits, by its name or UUID prefix.
    func trustSubject(named text: String, for step: TrustStep) async throws(LookupError) -> String? {
        do {
            switch step {
            case .request: return try await directory.peer(matching: text).uuid
            case .accept, .decline: return try await pairing.request(matching: text)
            }
        } catch {
            switch error {
            case .noPeer, .noPairing: return nil
            default: throw error
            }
        }
    }

    func trust(_ step: TrustStep, _ peerID: String) async throws -> TrustOutcome {
        let outcome =
            switch step {
            case .request: try await pairing.request(peerID, timeout: timeout)
            case .accept: try await pairing.accept(peerID, timeout: timeout)
            case .decline: try await pairing.decline(peerID)
            }
        return TrustOutcome(
            peerID: outcome.peerUUID, name: outcome.name, key: outcome.key.description, trust: outcome.trust,
            code: outcome.code, awaitingDevice: outcome.awaitingPeer)
    }

    /// The pin the store keeps is all there is to a hexd pairing: its unpairing ends it.
    func unpair(_ peerID: String, label: String) async throws -> TrustOutcome? { nil }
}
