/// What a Quick Share device says of itself: in its mDNS TXT record `n` (base64url) and its
/// connection request (raw). One byte of version (3 bits), visibility (1 bit, 0 = visible) and device
/// type (3 bits) with a reserved low bit; 16 random bytes; then, for a visible device, the name's
/// UTF-8 length in one byte and the name (NearDrop `PROTOCOL.md`; rquickshare `gen_mdns_endpoint_info`).
/// TLV records after the name (a QR code's) are ignored.
public struct EndpointInfo: Sendable, Equatable {
    public enum DeviceType: UInt8, Sendable {
        case unknown = 0
        case phone = 1
        case tablet = 2
        case laptop = 3
    }

    /// UTF-8 bytes of a name fit its one-byte length.
    public static let maximumNameBytes = 255

    public var deviceType: DeviceType
    /// Nil for a device that is hidden or that gave no name (phones may send 17 bytes: rquickshare #431).
    public var name: String?
    public var random: [UInt8]

    public init(deviceType: DeviceType, name: String?, random: [UInt8]) {
        self.deviceType = deviceType
        self.name = name
        self.random = random
    }

    /// Reads endpoint info from a connection request or a decoded TXT value; nil when it is shorter
    /// than its fixed part. A name that runs past the end or is not UTF-8 is read as no name.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 17 else { return nil }
        let flags = bytes[0]
        deviceType = DeviceType(rawValue: flags >> 1 & 0x07) ?? .unknown
        random = Array(bytes[1..<17])
        name = nil
        let visible = flags & 0x10 == 0
        if visible, bytes.count > 17 {
            let length = Int(bytes[17])
            if length > 0, bytes.count >= 18 + length {
                name = String(validating: bytes[18..<(18 + length)], as: UTF8.self)
            }
        }
    }

    /// The bytes, version 0 and visible; a name over 255 bytes is cut at a character's boundary.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = [deviceType.rawValue << 1]
        bytes += random.count == 16 ? random : [UInt8](repeating: 0, count: 16)
        guard let name else { return bytes }
        var utf8: [UInt8] = []
        for character in name {
            let next = Array(String(character).utf8)
            guard utf8.count + next.count <= Self.maximumNameBytes else { break }
            utf8 += next
        }
        return bytes + [UInt8(utf8.count)] + utf8
    }
}

/// The names a Quick Share receiver is published under in DNS-SD.
public enum QuickShareService {
    /// The first six bytes of SHA-256("NearbySharing"), in hex.
    public static let type = "_FC9F5ED42C8A._tcp"
    /// The service ID's first three bytes, after the endpoint ID in an instance name.
    static let serviceIDPrefix: [UInt8] = [0xFC, 0x9F, 0x5E]

    /// An instance name: base64url of 0x23, the 4-character endpoint ID, `FC 9F 5E` and two zero bytes.
    public static func instanceName(endpointID: [UInt8]) -> String {
        Base64URL.encode([0x23] + endpointID.prefix(4) + serviceIDPrefix + [0, 0])
    }

    /// The endpoint ID in an instance name, or nil when the name is not one of Quick Share's.
    public static func endpointID(ofInstance name: String) -> [UInt8]? {
        guard let bytes = Base64URL.decode(name), bytes.count == 10, bytes[0] == 0x23,
            Array(bytes[5..<8]) == serviceIDPrefix
        else { return nil }
        return Array(bytes[1..<5])
    }
}
