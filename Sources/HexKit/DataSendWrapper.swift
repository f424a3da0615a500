/// The envelope: one per message between peers, one JSON object per line on the wire.
///
/// The keys are the original Hexlist app's (`versionID`, `operationType`, `message`,
/// `jmObjectType`, `jmObject`) plus hexd's optional extensions (`messageID`, `status`), which a
/// 1.x peer ignores. Only `versionID` and `operationType` are required; see `decode(from:)`.
public struct DataSendWrapper: Sendable, Hashable {
    /// The sender's app version ("1.0" for the original app). Recorded, never a reason to refuse.
    public var versionID: String
    public var operationType: OperationType
    /// The text of an Alert, or the human explanation in an Ack.
    public var message: String?
    public var jmObjectType: JMObjectType?
    public var jmObject: JMObject?
    /// Extension: a UUID string chosen by the sender. The receiver answers it with an `Ack`.
    public var messageID: String?
    /// Extension: the outcome reported by an `Ack`.
    public var status: AckStatus?

    public init(
        versionID: String, operationType: OperationType, message: String? = nil,
        jmObjectType: JMObjectType? = nil, jmObject: JMObject? = nil, messageID: String? = nil,
        status: AckStatus? = nil
    ) {
        self.versionID = versionID
        self.operationType = operationType
        self.message = message
        self.jmObjectType = jmObjectType
        self.jmObject = jmObject
        self.messageID = messageID
        self.status = status
    }

    /// A Store envelope carrying `hex`.
    public static func store(_ hex: HexJM, versionID: String, messageID: String? = nil) -> Self {
        Self(versionID: versionID, operationType: .store, jmObjectType: .hex, jmObject: .hex(hex), messageID: messageID)
    }

    /// An Alert envelope carrying `message`.
    public static func alert(_ message: String, versionID: String, messageID: String? = nil) -> Self {
        Self(versionID: versionID, operationType: .alert, message: message, messageID: messageID)
    }

    /// The Ack answering the envelope whose id is `messageID`.
    public static func ack(
        _ status: AckStatus, messageID: String?, message: String, versionID: String
    ) -> Self {
        Self(versionID: versionID, operationType: .ack, message: message, messageID: messageID, status: status)
    }

    /// The hex this envelope carries, when it is a Store of a HexJM.
    public var hex: HexJM? { jmObject?.hex }
}

extension DataSendWrapper: Codable {
    private enum CodingKeys: String, CodingKey {
        case versionID, operationType, message, jmObjectType, jmObject, messageID, status
    }

    /// Tolerant decoding; throws `EnvelopeDecodingError` only when the value is not an object or
    /// lacks `versionID` or `operationType`.
    ///
    /// `jmObject` is read as a HexJM when `jmObjectType` is `Hex`, or when `jmObjectType` is
    /// missing from a Store (the original app only ever stored hexes); any other object is kept
    /// opaque. A `jmObject` that is not a JSON object counts as missing.
    public init(from decoder: any Decoder) throws {
        let container: KeyedDecodingContainer<CodingKeys>
        do {
            container = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            throw EnvelopeDecodingError.notAnObject
        }
        messageID = container.lenientString(forKey: .messageID)
        guard let versionID = container.lenientString(forKey: .versionID) else {
            throw EnvelopeDecodingError.missingKey("versionID", messageID: messageID)
        }
        guard let operationType = container.lenientString(forKey: .operationType) else {
            throw EnvelopeDecodingError.missingKey("operationType", messageID: messageID)
        }
        self.versionID = versionID
        self.operationType = OperationType(rawValue: operationType)
        message = container.lenientString(forKey: .message)
        jmObjectType = container.lenientString(forKey: .jmObjectType).map(JMObjectType.init(rawValue:))
        status = container.lenientString(forKey: .status).map(AckStatus.init(rawValue:))

        let objectType = jmObjectType ?? (self.operationType == .store ? .hex : nil)
        if objectType == .hex {
            jmObject = container.lenient(HexJM.self, forKey: .jmObject).map(JMObject.hex)
        } else if case .object(let fields) = container.lenient(JSONValue.self, forKey: .jmObject) {
            jmObject = .opaque(.object(fields))
        } else {
            jmObject = nil
        }
    }

    /// Keys whose value is nil are left out, as the original app did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(versionID, forKey: .versionID)
        try container.encode(operationType, forKey: .operationType)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(jmObjectType, forKey: .jmObjectType)
        switch jmObject {
        case .hex(let hex): try container.encode(hex, forKey: .jmObject)
        case .opaque(let value): try container.encode(value, forKey: .jmObject)
        case nil: break
        }
        try container.encodeIfPresent(messageID, forKey: .messageID)
        try container.encodeIfPresent(status, forKey: .status)
    }
}
