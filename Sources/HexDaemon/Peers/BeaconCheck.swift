import HexKit
import HexTLS

extension Beacon {
    /// This beacon carrying `signer`'s key, numbered `boot` and `sequence`, and signed by it
    /// (Protocol.md, section 9); nil only when libcrypto cannot sign.
    func signed(by signer: TLSIdentity, boot: UInt64, sequence: UInt64) -> Beacon? {
        var beacon = self
        beacon.key = Fingerprint.hex(signer.publicKey.subjectPublicKeyInfo)
        beacon.boot = boot
        beacon.sequence = sequence
        guard let message = beacon.signedMessage, let signature = signer.sign(message) else { return nil }
        beacon.signature = Fingerprint.hex(signature)
        return beacon
    }
}

/// What a received beacon proves about its sender (Protocol.md, section 9, "Signed beacons").
enum BeaconCheck: Equatable {
    /// Signed by the key its peer UUID derives from: it speaks for that ID, at `boot`, `sequence`.
    case signed(boot: UInt64, sequence: UInt64)
    /// Unsigned, from a peer whose UUID is its own choice (a legacy peer): only a claim.
    case unsigned
    /// Neither: a derived ID without a valid signature, or a signature that does not hold.
    case forged(String)

    /// Checks `beacon`'s signature against the key it carries, and that key against its peer UUID.
    /// Costs one SHA-256 and one Ed25519 verification; call it only once the source's rate allows.
    init(_ beacon: Beacon) {
        let claimsDerivedID = beacon.peer.isKeyDerivedID
        guard let keyText = beacon.key, let signatureText = beacon.signature,
              let boot = beacon.boot, let sequence = beacon.sequence, let message = beacon.receivedMessage else {
            self = claimsDerivedID ? .forged("it claims a derived ID without a signature") : .unsigned
            return
        }
        guard let der = Fingerprint.bytes(hex: keyText, maximumCount: DeviceKey.maximumEncodedSize),
              let key = DeviceKey(subjectPublicKeyInfo: der) else {
            self = .forged("its key is not an Ed25519 public key")
            return
        }
        guard key.deviceID.uppercaseText == beacon.peer else {
            self = .forged("its key derives the ID \(key.deviceID.uppercaseText), not \(beacon.peer)")
            return
        }
        guard let signature = Fingerprint.bytes(hex: signatureText, count: DeviceKey.signatureSize),
              key.verifies(signature, of: message) else {
            self = .forged("its signature does not hold")
            return
        }
        self = .signed(boot: boot, sequence: sequence)
    }
}

/// The newest (boot, sequence) accepted from each signing peer: a signed beacon older than that
/// is a replay and changes nothing; one equal to it is the same beacon heard again (through
/// another path, or replayed from another host), which may only add a candidate address.
///
/// Kept apart from the peer table, and longer (up to `capacity` peers, the oldest forgotten
/// first), so that a peer that expired cannot be brought back by replaying its old beacons.
struct BeaconFreshness {
    enum Verdict: Equatable {
        /// Newer than anything accepted from this peer.
        case fresh
        /// The one accepted last, again.
        case repeated
        /// Older: a replay.
        case stale
    }

    static let capacity = 4_096

    private var newest: [String: (boot: UInt64, sequence: UInt64, order: UInt64)] = [:]
    private var accepted: UInt64 = 0

    /// Judges a signed beacon of `peer` and, when it is fresh, remembers it as the newest.
    mutating func judge(peer: String, boot: UInt64, sequence: UInt64) -> Verdict {
        if let last = newest[peer] {
            if (boot, sequence) == (last.boot, last.sequence) { return .repeated }
            if (boot, sequence) < (last.boot, last.sequence) { return .stale }
        } else if newest.count >= Self.capacity, let oldest = newest.min(by: { $0.value.order < $1.value.order }) {
            newest[oldest.key] = nil
        }
        accepted += 1
        newest[peer] = (boot, sequence, accepted)
        return .fresh
    }
}
