import HexJSON
import HexKit

/// A KDE Connect device as its `kdeconnect.identity` packet describes it: in a UDP broadcast, as
/// the first line of a TCP connection, and (protocol 8) again inside TLS.
///
/// The rules are the ones the current apps enforce (kdeconnect-kde `core/deviceinfo.h`,
/// `lanlinkprovider.cpp`), so a device hexd lists is one they would list too: the ID is 32 to 38
/// letters, digits, `-` or `_`; the name, without the characters the apps forbid in it, is 1 to 32
/// characters; the protocol version is 7 or more; a broadcast names a TCP port in 1716–1764.
public struct KDEConnectIdentity: Sendable, Equatable {
    /// What the device is, as the apps show it.
    public enum DeviceType: String, Sendable, CaseIterable {
        case desktop, laptop, phone, tablet, tv
    }

    public var deviceID: String
    public var name: String
    public var deviceType: DeviceType
    public var protocolVersion: Int
    /// Packet types it takes (`kdeconnect.share.request`, …).
    public var incomingCapabilities: [String]
    /// Packet types it sends.
    public var outgoingCapabilities: [String]
    /// Where it accepts links: in a broadcast only.
    public var tcpPort: UInt16?
    /// In an identity sent on a TCP connection: the device it is meant for, and the protocol
    /// version the sender heard that device announce.
    public var targetDeviceID: String?
    public var targetProtocolVersion: Int?
    /// A hexd's signed word that this identity is its persona (`PersonaClaim`): hexd's own carries
    /// one; another hexd checks it, and then leaves the identity to hexd's own protocol.
    public var hexdClaim: PersonaClaim?

    public static let packetType = "kdeconnect.identity"
    /// UDP port of broadcasts, and the first TCP port a device tries to listen on.
    public static let port: UInt16 = 1_716
    /// The TCP ports a device listens on for links.
    public static let tcpPorts: ClosedRange<UInt16> = 1_716...1_764
    /// The protocol versions hexd speaks: 7 (the apps up to 24.12, Debian's 22.12) and 8 (25.04 on,
    /// and the Android app since 1.33), whose identity is sent again inside TLS.
    public static let protocolVersions: ClosedRange<Int> = 7...8
    public static let maximumNameCharacters = 32
    public static let maximumNameBytes = 128
    /// Characters the apps remove from a name (`DeviceInfo::filterName`).
    static let forbiddenNameCharacters: Set<Character> = [
        "\"", "'", ",", ";", ":", ".", "!", "?", "(", ")", "[", "]", "<", ">",
    ]
    static let maximumCapabilities = 128
    static let maximumCapabilityBytes = 96

    public init(
        deviceID: String, name: String, deviceType: DeviceType, protocolVersion: Int,
        incomingCapabilities: [String], outgoingCapabilities: [String], tcpPort: UInt16? = nil,
        targetDeviceID: String? = nil, targetProtocolVersion: Int? = nil, hexdClaim: PersonaClaim? = nil
    ) {
        self.deviceID = deviceID
        self.name = Self.filteredName(name)
        self.deviceType = deviceType
        self.protocolVersion = protocolVersion
        self.incomingCapabilities = incomingCapabilities
        self.outgoingCapabilities = outgoingCapabilities
        self.tcpPort = tcpPort
        self.targetDeviceID = targetDeviceID
        self.targetProtocolVersion = targetProtocolVersion
        self.hexdClaim = hexdClaim
    }

    /// Why a packet is no identity hexd takes.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case notAnIdentity(String)
        case badDeviceID
        case badName
        case unsupportedVersion(Int?)
        case badPort

        public var description: String {
            switch self {
            case .notAnIdentity(let type): "a \(type) packet where an identity was due"
            case .badDeviceID: "its device ID is not 32 to 38 letters, digits, - or _"
            case .badName: "its name is empty once the characters KDE Connect forbids are removed"
            case .unsupportedVersion(let version):
                "protocol version \(version.map(String.init) ?? "none") (hexd speaks 7 and 8)"
            case .badPort: "its TCP port is absent or outside 1716–1764"
            }
        }
    }

    /// The identity a packet carries.
    /// - Parameter broadcast: the packet came in a datagram, which must name a TCP port.
    /// - Throws: `Refusal`.
    public init(_ packet: KDEConnectPacket, broadcast: Bool) throws(Refusal) {
        guard packet.type == Self.packetType else { throw .notAnIdentity(packet.type) }
        let body = packet.body
        guard let deviceID = body.string("deviceId"), Self.isValidDeviceID(deviceID) else { throw .badDeviceID }
        let name = Self.filteredName(body.string("deviceName") ?? "")
        guard !name.isEmpty else { throw .badName }
        let version = body.integer("protocolVersion", as: Int.self)
        // Later versions are spoken at hexd's highest: a device of version 9 still speaks 8.
        guard let version, version >= Self.protocolVersions.lowerBound else { throw .unsupportedVersion(version) }
        let port = body.integer("tcpPort", as: UInt16.self)
        if broadcast {
            guard let port, Self.tcpPorts.contains(port) else { throw .badPort }
        }
        self.init(
            deviceID: deviceID, name: name,
            deviceType: body.string("deviceType").flatMap(DeviceType.init(rawValue:)) ?? .desktop,
            protocolVersion: version,
            incomingCapabilities: body.strings(
                "incomingCapabilities", atMost: Self.maximumCapabilities, ofAtMost: Self.maximumCapabilityBytes),
            outgoingCapabilities: body.strings(
                "outgoingCapabilities", atMost: Self.maximumCapabilities, ofAtMost: Self.maximumCapabilityBytes),
            tcpPort: port,
            // A target that is no device ID stays as it came, and names no device hexd is.
            targetDeviceID: body.string("targetDeviceId").map { $0.clipped(toUTF8: 64) },
            // The Android app writes it as a string.
            targetProtocolVersion: body.integer("targetProtocolVersion", as: Int.self)
                ?? body.string("targetProtocolVersion").flatMap { Int($0) },
            hexdClaim: PersonaClaim(in: body))
    }

    /// The version two devices speak: the lower of theirs, at most hexd's highest.
    public func versionSpoken(with other: KDEConnectIdentity) -> Int {
        min(protocolVersion, other.protocolVersion, Self.protocolVersions.upperBound)
    }

    /// Whether the device takes packets of `type`.
    public func takes(_ type: String) -> Bool {
        incomingCapabilities.contains(type)
    }

    /// `^[a-zA-Z0-9_-]{32,38}$`, as the apps check it since January 2025 (the form hexd's IDs for
    /// the devices take, `KDEConnectID`).
    public static func isValidDeviceID(_ text: String) -> Bool {
        KDEConnectID.of(deviceID: text) != nil
    }

    /// A name as the apps accept it: without the characters they forbid, control and format
    /// characters (a right-to-left override would turn a log line around), trimmed, at most 32
    /// characters and `maximumNameBytes` bytes (a character can carry any number of combining marks).
    public static func filteredName(_ name: String) -> String {
        let kept = name.filter { character in
            !forbiddenNameCharacters.contains(character)
                && !character.unicodeScalars.contains {
                    [.control, .format].contains($0.properties.generalCategory)
                }
        }
        return String(kept.trimmed.prefix(maximumNameCharacters)).clipped(toUTF8: maximumNameBytes).trimmed
    }

    /// The identity packet as a line.
    /// - Parameter id: the sender's clock in milliseconds.
    public func encoded(id: Int64) -> [UInt8] {
        KDEConnectPacket.encoded(type: Self.packetType, id: id) { writer in
            writer.member("deviceId", deviceID)
            writer.member("deviceName", name)
            writer.member("deviceType", deviceType.rawValue)
            writer.member("protocolVersion", Int64(protocolVersion))
            writer.key("incomingCapabilities")
            writer.beginArray()
            for capability in incomingCapabilities { writer.string(capability) }
            writer.endArray()
            writer.key("outgoingCapabilities")
            writer.beginArray()
            for capability in outgoingCapabilities { writer.string(capability) }
            writer.endArray()
            if let tcpPort { writer.member("tcpPort", Int64(tcpPort)) }
            writer.member("targetDeviceId", targetDeviceID)
            if let targetProtocolVersion { writer.member("targetProtocolVersion", Int64(targetProtocolVersion)) }
            hexdClaim?.write(to: &writer)
        }
    }
}
