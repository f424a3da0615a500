/// Whose share of the inbox a received hex counts against: the key a TLS connection proved, or
/// the address a plaintext envelope came from (a plaintext sender names any UUID it likes).
public struct SenderAccount: Sendable, Hashable, CustomStringConvertible {
    /// `key:<device ID>`, `address:<IP>`, or `sender:<UUID>` for hexes stored before accounts
    /// were kept (their address was not recorded).
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static func key(_ deviceID: String) -> Self { Self(rawValue: "key:" + deviceID) }
    public static func address(_ address: String) -> Self { Self(rawValue: "address:" + address) }

    /// `key 6F9619FF` or `address 192.168.1.20`, for logs and `status`.
    public var description: String {
        guard let colon = rawValue.firstIndex(of: ":") else { return rawValue }
        let kind = rawValue[..<colon]
        let value = rawValue[rawValue.index(after: colon)...]
        return kind + " " + (kind == "address" ? String(value) : String(value.prefix(8)))
    }
}
