import HexJSON

/// The object of a `Pair` envelope (`jmObjectType` `Pair`): one step of pairing two devices'
/// keys with a verification code (Protocol.md, section 12). hexd extension; only ever sent over
/// TLS, to current peers.
///
/// Every field is checked as it is read, so a `PairJM` in hand is well formed: hex digits of
/// the right length, a UUID, a name cut to its cap.
public struct PairJM: Sendable, Hashable {
    /// The steps, in the order they are sent.
    public enum Step: String, Sendable, Hashable {
        /// Initiator to responder: who it is, and its commitment to a nonce it keeps secret.
        case request
        /// Responder's reply to `request`: who it is, and its own nonce.
        case nonce
        /// Initiator to responder, on the same connection: the nonce it committed to.
        case reveal
        /// Responder to initiator, on a new connection, once its user accepted: the code it showed.
        case accept
    }

    public var step: Step
    /// The sender's peer UUID, uppercase (`request`, `nonce`, `accept`).
    public var senderUUID: String?
    /// The sender's display name (`request`, `nonce`), at most `maximumNameBytes`.
    public var senderName: String?
    /// `request`: the SHA-256 of the initiator's nonce, 64 lowercase hex digits.
    public var commitment: String?
    /// `nonce`: the responder's nonce; `reveal`: the initiator's. 32 lowercase hex digits (16 bytes).
    public var nonce: String?
    /// `accept`: the verification code, 8 uppercase hex digits.
    public var code: String?

    public static let maximumNameBytes = 200

    public init(
        step: Step, senderUUID: String? = nil, senderName: String? = nil, commitment: String? = nil,
        nonce: String? = nil, code: String? = nil
    ) {
        self.step = step
        self.senderUUID = senderUUID?.uppercased()
        self.senderName = senderName?.clipped(toUTF8: Self.maximumNameBytes)
        self.commitment = commitment
        self.nonce = nonce
        self.code = code
    }

    /// Reads a `jmObject`; nil when it is not an object with a known `step` and well-formed fields.
    public init?(_ raw: RawJSON) {
        guard case .object(let object)? = try? JSONValue.parse(raw.bytes),
            case .string(let stepName)? = object["step"], let step = Step(rawValue: stepName)
        else { return nil }
        func text(_ key: String) -> String?? {
            switch object[key] {
            case nil, .null?: .some(nil)
            case .string(let value)?: .some(value)
            default: nil
            }
        }
        guard let uuid = text("senderUUID"), let name = text("senderName"), let commitment = text("commitment"),
            let nonce = text("nonce"), let code = text("code")
        else { return nil }
        if let uuid, UUID(strict: uuid) == nil { return nil }
        guard commitment.map({ HexDigits.isHex($0, count: 64) }) ?? true,
            nonce.map({ HexDigits.isHex($0, count: 32) }) ?? true,
            code.map({ HexDigits.isHex($0, count: 8) }) ?? true
        else { return nil }
        self.init(
            step: step, senderUUID: uuid, senderName: name, commitment: commitment?.lowercased(),
            nonce: nonce?.lowercased(), code: code?.uppercased())
    }

    /// The object as a `jmObject`: keys sorted, unset ones left out.
    public var raw: RawJSON {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("code", code)
        writer.member("commitment", commitment)
        writer.member("nonce", nonce)
        writer.member("senderName", senderName)
        writer.member("senderUUID", senderUUID)
        writer.member("step", step.rawValue)
        writer.endObject()
        return RawJSON(compacted: writer.bytes)
    }
}

extension Envelope {
    /// A Pair envelope carrying one step of pairing.
    public static func pair(_ pair: PairJM, versionID: String, messageID: String?) -> Self {
        Self(
            versionID: versionID, operationType: .pair, jmObjectType: .pair, jmObject: .opaque(pair.raw),
            messageID: messageID)
    }

    /// The pairing step this envelope carries, when it is a well-formed Pair.
    public var pair: PairJM? {
        guard operationType == .pair, jmObjectType == .pair, case .opaque(let raw)? = jmObject else { return nil }
        return PairJM(raw)
    }
}
