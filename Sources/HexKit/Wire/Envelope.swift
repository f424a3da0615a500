/// The envelope: one per message between peers, one JSON object per line on the wire (the
/// original app called it `DataSendWrapper`).
///
/// The keys are the original Hexlist app's (`versionID`, `operationType`, `message`,
/// `jmObjectType`, `jmObject`) plus hexd's optional extensions (`messageID`, `status`, `hexID`), which a
/// 1.x peer ignores. Only `versionID` and `operationType` are required; see `decode(from:limits:)`.
/// Read with `decode(from:limits:)` (EnvelopeReader.swift), written with `encodedLine()`.
public struct Envelope: Sendable, Hashable {
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
    /// Extension: in an Ack `stored`, the id the receiver gave the stored hex.
    public var hexID: String?

    public init(
        versionID: String, operationType: OperationType, message: String? = nil,
        jmObjectType: JMObjectType? = nil, jmObject: JMObject? = nil, messageID: String? = nil,
        status: AckStatus? = nil, hexID: String? = nil
    ) {
        self.versionID = versionID
        self.operationType = operationType
        self.message = message
        self.jmObjectType = jmObjectType
        self.jmObject = jmObject
        self.messageID = messageID
        self.status = status
        self.hexID = hexID
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
        _ status: AckStatus, messageID: String?, message: String, versionID: String, hexID: String? = nil
    ) -> Self {
        Self(
            versionID: versionID, operationType: .ack, message: message, messageID: messageID, status: status,
            hexID: hexID)
    }

    /// The hex this envelope carries, when it is a Store of a HexJM.
    public var hex: HexJM? { jmObject?.hex }
}
