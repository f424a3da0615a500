import HexKit
import HexTLS

extension Beacon {
    /// This beacon carrying `signer`'s key, numbered `boot` and `sequence`, and signed by it
    /// (Protocol.md, section 9); nil only when libcrypto cannot sign.
    public func signed(by signer: TLSIdentity, boot: UInt64, sequence: UInt64) -> Beacon? {
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
public enum BeaconCheck: Equatable, Sendable {
    /// Signed by the key its peer UUID derives from: it speaks for that ID, at `boot`, `sequence`.
    case signed(boot: UInt64, sequence: UInt64)
    /// Unsigned, from a peer whose UUID is its own choice (a legacy peer): only a claim.
    case unsigned
    /// Neither: a derived ID without a valid signature, or a signature that does not hold.
    case forged(String)

    /// Checks `beacon`'s signature against the key it carries, and that key against its peer UUID.
    /// Costs one SHA-256 and one Ed25519 verification; call it only once the source's rate allows.
    public init(_ beacon: Beacon) {
        self.init(beacon, key: beacon.key.flatMap(DeviceKey.init(hex:)))
    }

    /// Checks `beacon` as `init(_:)` does, its key read already (`key`: nil when it carries none
    /// or one that is not an Ed25519 key), so a receiver can keep the keys it verified before.
    public init(_ beacon: Beacon, key: DeviceKey?) {
        let claimsDerivedID = beacon.peer.isKeyDerivedID
        guard beacon.key != nil, let signatureText = beacon.signature,
            let boot = beacon.boot, let sequence = beacon.sequence, let message = beacon.receivedMessage
        else {
            self = claimsDerivedID ? .forged("it claims a derived ID without a signature") : .unsigned
            return
        }
        guard let key else {
            self = .forged("its key is not an Ed25519 public key")
            return
        }
        guard key.deviceID.uppercaseText == beacon.peer else {
            self = .forged("its key derives the ID \(key.deviceID.uppercaseText), not \(beacon.peer)")
            return
        }
        guard let signature = Fingerprint.bytes(hex: signatureText, count: DeviceKey.signatureSize),
            key.verifies(signature, of: message)
        else {
            self = .forged("its signature does not hold")
            return
        }
        self = .signed(boot: boot, sequence: sequence)
    }
}

/// The keys whose signatures verified lately, by their text in beacons: a known peer's beacon
/// then costs its signature check alone, not the making of its key again. At most `capacity`;
/// a forger's keys never enter, since they never verify.
struct VerifiedKeys {
    static let capacity = 1_024
    private var keys: [String: DeviceKey] = [:]

    /// The key a beacon names: the one kept, or a new one read from `hex`.
    func key(_ hex: String?) -> (key: DeviceKey?, isKept: Bool) {
        guard let hex else { return (nil, false) }
        if let kept = keys[hex] { return (kept, true) }
        return (DeviceKey(hex: hex), false)
    }

    /// Keeps a key whose signature just verified.
    mutating func keep(_ key: DeviceKey, as hex: String) {
        if keys.count >= Self.capacity, let any = keys.keys.first { keys[any] = nil }
        keys[hex] = key
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

    private var newest: [String: (boot: UInt64, sequence: UInt64, signature: String?, order: UInt64)] = [:]
    private var accepted: UInt64 = 0

    /// Whether `beacon` is the one accepted last from its peer, to the byte of its signature: a
    /// beacon heard again (over the other family, or from a host replaying it). Its signature
    /// need not be checked again: whatever it is, all it may do is add a candidate address, which
    /// the verified original replayed from the same host would do too.
    func isHeardAgain(_ beacon: Beacon) -> Bool {
        guard let signature = beacon.signature, let last = newest[beacon.peer] else { return false }
        return (beacon.boot, beacon.sequence, signature) == (last.boot, last.sequence, last.signature)
    }

    /// Judges a signed beacon of `peer` and, when it is fresh, remembers it (and its signature)
    /// as the newest.
    mutating func judge(peer: String, boot: UInt64, sequence: UInt64, signature: String? = nil) -> Verdict {
        if let last = newest[peer] {
            if (boot, sequence) == (last.boot, last.sequence) { return .repeated }
            if (boot, sequence) < (last.boot, last.sequence) { return .stale }
        } else if newest.count >= Self.capacity, let oldest = newest.min(by: { $0.value.order < $1.value.order }) {
            newest[oldest.key] = nil
        }
        accepted += 1
        newest[peer] = (boot, sequence, signature, accepted)
        return .fresh
    }
}
