import HexJSON
import HexKit

/// A LocalSend device as it describes itself: in a multicast announcement, in a `register` body
/// and its answer, in an `info` answer, and as the `info` of a `prepare-upload` (LocalSend's
/// protocol 2.x, github.com/localsend/protocol, and the 2.2 of its 1.18 apps).
///
/// Anyone on the LAN can send one, so every field is bounded on the way in: strings are cut to
/// their caps, an unknown device type reads as `desktop` (as the apps read it), and a text
/// without an alias or a fingerprint is no device (`decode` returns nil).
public struct LocalSendDevice: Sendable, Equatable {
    /// What the device is, as its icon in the apps shows it.
    public enum DeviceType: String, Sendable, CaseIterable {
        case mobile, desktop, web, headless, server
    }

    /// How the device's HTTP API is reached.
    public enum Scheme: String, Sendable {
        case http, https
    }

    /// The name the apps show (`Nice Pineapple`).
    public var alias: String
    /// The protocol version it speaks: `2.2` (the 1.18 apps), `2.1`, `2.0`; `1.0` when it says none.
    public var version: String
    /// Its make or system (`Pixel 8`, `Linux`); nil when it says none.
    public var deviceModel: String?
    public var deviceType: DeviceType
    /// Over HTTPS, the upper-case hex SHA-256 of its certificate; over HTTP, a random text. Only a
    /// claim until a TLS handshake shows the certificate.
    public var fingerprint: String
    /// The TCP port of its HTTP API; absent from answers, which come from that port.
    public var port: UInt16?
    public var scheme: Scheme?
    /// Whether its Download API (browsers fetching files it offers) is on.
    public var download: Bool
    /// True in an announcement that asks to be answered; false or absent otherwise.
    public var announce: Bool?
    /// A hexd's signed word that this device is its persona (`PersonaClaim`): hexd's own carries
    /// one; another hexd checks it, and then leaves the device to hexd's own protocol.
    public var hexdClaim: PersonaClaim?

    /// The largest text a device is read from: an announcement is a datagram of a few hundred bytes.
    public static let maximumSize = 4_096
    public static let maximumAliasBytes = 200
    public static let maximumVersionBytes = 16
    public static let maximumModelBytes = 100
    /// A fingerprint is never cut (it is an identity): a longer one is refused.
    public static let maximumFingerprintBytes = 128
    /// The port LocalSend uses unless told otherwise, for its API and its multicast group.
    public static let defaultPort: UInt16 = 53_317

    public init(
        alias: String, version: String, deviceModel: String?, deviceType: DeviceType, fingerprint: String,
        port: UInt16? = nil, scheme: Scheme? = nil, download: Bool = false, announce: Bool? = nil,
        hexdClaim: PersonaClaim? = nil
    ) {
        self.alias = alias.clipped(toUTF8: Self.maximumAliasBytes)
        self.version = version.clipped(toUTF8: Self.maximumVersionBytes)
        self.deviceModel = deviceModel?.clipped(toUTF8: Self.maximumModelBytes)
        self.deviceType = deviceType
        self.fingerprint = fingerprint
        self.port = port
        self.scheme = scheme
        self.download = download
        self.announce = announce
        self.hexdClaim = hexdClaim
    }

    /// The device `bytes` describe; nil when they are not JSON, are longer than `maximumSize`, or
    /// lack an alias or a fingerprint.
    public static func decode(_ bytes: some Collection<UInt8>) -> LocalSendDevice? {
        guard bytes.count <= maximumSize,
            case .object(let object)? = try? JSONValue.parse(bytes, limits: JSONLimits(maximumDepth: 4))
        else { return nil }
        return LocalSendDevice(object)
    }

    /// The device a JSON object describes (as `decode` reads it).
    init?(_ object: JSONObject) {
        guard let alias = object.string("alias"), let fingerprint = object.string("fingerprint"),
            !fingerprint.isEmpty, fingerprint.utf8.count <= Self.maximumFingerprintBytes
        else { return nil }
        let port = object.integer("port", as: UInt16.self)
        self.init(
            alias: alias, version: object.string("version") ?? "1.0", deviceModel: object.string("deviceModel"),
            deviceType: object.string("deviceType").flatMap(DeviceType.init(rawValue:)) ?? .desktop,
            fingerprint: fingerprint, port: port == 0 ? nil : port,
            scheme: object.string("protocol").flatMap(Scheme.init(rawValue:)),
            download: object.bool("download") ?? false,
            announce: object.bool("announce"), hexdClaim: PersonaClaim(in: object))
    }

    /// The device as JSON, its fields in the order the apps write them.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        write(to: &writer)
        return writer.bytes
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("alias", alias)
        writer.member("version", version)
        writer.member("deviceModel", orNull: deviceModel)
        writer.member("deviceType", deviceType.rawValue)
        writer.member("fingerprint", fingerprint)
        if let port { writer.member("port", Int64(port)) }
        if let scheme { writer.member("protocol", scheme.rawValue) }
        writer.member("download", download)
        if let announce { writer.member("announce", announce) }
        hexdClaim?.write(to: &writer)
        writer.endObject()
    }
}
