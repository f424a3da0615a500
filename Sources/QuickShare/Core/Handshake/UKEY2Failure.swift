/// A handshake that cannot go on: why, and the alert to send first when the reference sends one.
public struct UKEY2Failure: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    /// The `UKEY2Message` bytes of the alert, or nil to close without one.
    public let alert: [UInt8]?

    init(_ reason: String, alert: UKEY2Alert.Kind?) {
        self.reason = reason
        self.alert = alert.map { UKEY2Message(kind: .alert, data: UKEY2Alert($0).protobuf).protobuf }
    }

    public var description: String { reason }
}
