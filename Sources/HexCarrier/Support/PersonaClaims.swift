import HexEngine
import HexKit
import HexTLS
import Synchronization

/// hexd's persona claims (`PersonaClaim`, Protocol.md section 16.1): made for its own LocalSend
/// and KDE Connect identities, and checked in the identities heard, so that another hexd is met
/// once, as a hexd peer by its beacons and DNS-SD, and never listed, linked or paired as a device
/// of a foreign protocol.
///
/// A claim counts only when its key derives its peer ID and its signature of the persona's ID
/// holds. What a check costs is bounded: a claim that held before (the same claim, whole, on the
/// same persona) costs a look-up, and at most `checksPerSecond` new ones are checked in all; past that,
/// an identity carrying a claim is left out unchecked. That hides nothing a person owns: the apps
/// carry no claim, so an identity that does is another hexd's or a forger's.
package final class PersonaClaims: Sendable {
    /// New claims checked a second at most (twice as many at once), from any number of sources.
    package static let checksPerSecond = 100.0
    /// Claims remembered as checked, the oldest forgotten first past it.
    package static let capacity = 1_024

    private let signer: TLSIdentity
    private let state: Mutex<State>

    private struct State {
        /// The claim that held for each persona ID, whole, and the order they were checked in.
        var held: [String: PersonaClaim] = [:]
        var order: [String] = []
        var budget = TokenBucket(rate: checksPerSecond, burst: checksPerSecond * 2)
    }

    /// - Parameter signer: this device's identity, whose key signs hexd's own claims.
    package init(signer: TLSIdentity) {
        self.signer = signer
        state = Mutex(State())
    }

    /// hexd's claim on its persona `persona` (its ID in hexd's spelling, `canonicalPeerID`); nil
    /// only when libcrypto cannot sign.
    package func claim(persona: String) -> PersonaClaim? {
        let peer = signer.deviceID.uppercaseText
        guard let message = PersonaClaim.signedMessage(persona: persona, peer: peer),
            let signature = signer.sign(message)
        else { return nil }
        return PersonaClaim(
            peer: peer, key: Fingerprint.hex(signer.publicKey.subjectPublicKeyInfo),
            signature: Fingerprint.hex(signature))
    }

    /// Whether an identity going by `persona` (hexd's ID of it; nil when it has none) and carrying
    /// `claim` is a hexd's persona: the claim holds, or there were too many new claims to check
    /// this second. False for an identity without a claim, as every app's is, and for one whose
    /// claim does not hold (it is then what it is, a device of its protocol).
    package func isHexd(_ persona: String?, claim: PersonaClaim?, now: ContinuousClock.Instant = .now) -> Bool {
        guard let claim, let persona else { return false }
        let mustCheck = state.withLock { state in
            state.held[persona] != claim && state.budget.take(at: now)
        }
        // Checked before, or past the budget: left out unchecked.
        guard mustCheck else { return true }
        guard Self.holds(claim, persona: persona) else { return false }
        state.withLock { state in
            if state.held.updateValue(claim, forKey: persona) == nil {
                state.order.append(persona)
                if state.order.count > Self.capacity { state.held[state.order.removeFirst()] = nil }
            }
        }
        return true
    }

    /// Whether `claim`'s key derives its peer ID and signed `persona`.
    package static func holds(_ claim: PersonaClaim, persona: String) -> Bool {
        guard let key = DeviceKey(hex: claim.key), key.deviceID.uppercaseText == claim.peer.uppercased(),
            let signature = Fingerprint.bytes(hex: claim.signature, count: DeviceKey.signatureSize),
            let message = PersonaClaim.signedMessage(persona: persona, peer: claim.peer)
        else { return false }
        return key.verifies(signature, of: message)
    }
}
