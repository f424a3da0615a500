import HexJSON

/// A discovery datagram: who a daemon is and where it takes envelopes. Compact JSON, well under
/// 1 KiB.
///
/// Every field is bounded on the way in as on the way out, because anyone on the LAN can send
/// one: strings are cut to their caps, the interval is clamped, and a beacon that is not of this
/// shape is dropped whole (`decode` returns nil).
public struct Beacon: Sendable, Codable, Equatable {
    public static let formatTag = "hexd-beacon/1"
    /// The largest datagram read; a longer one is dropped as oversized.
    public static let maximumSize = 1_024
    /// Caps, in UTF-8 bytes, of the strings a beacon carries.
    public static let maximumNameBytes = 200
    public static let maximumVersionBytes = 40
    public static let maximumCapabilities = 8
    public static let maximumCapabilityBytes = 32
    /// The interval a peer may announce, in seconds: a shorter one is raised to the minimum (it
    /// would make it expire at once), a longer one lowered to the maximum (it would keep a
    /// silent peer listed for days).
    public static let intervalRange = 0.1...600.0

    public enum Kind: String, Sendable, Codable {
        /// "Here I am": sent at start in a burst, then every interval.
        case announce
        /// "Who is there?": sent at start; every daemon that hears it announces itself at once.
        case query
        /// "I am leaving": sent on a clean shutdown.
        case bye
    }

    public var format = Beacon.formatTag
    public var kind: Kind
    /// The stable peer UUID (uppercase), kept across restarts.
    public var peer: String
    /// New at every start (a UUID), so a restart is recognised.
    public var instance: String
    public var name: String
    public var versionID: String
    /// The TCP port for envelopes.
    public var port: UInt16
    /// Seconds between this daemon's announcements; it is lost after three missed ones.
    public var interval: Double
    /// What the daemon speaks beyond the original app: `ack` (messageID and Ack), `tls` (TLS 1.3
    /// on its TCP port).
    public var capabilities: [String]
    /// The SHA-256 of the daemon's certificate, 64 lowercase hex digits (Protocol.md, section 12).
    /// Only a claim: a TLS handshake proves it.
    public var fingerprint: String?

    public init(
        kind: Kind, peer: String, instance: String, name: String, versionID: String, port: UInt16, interval: Double, capabilities: [String],
        fingerprint: String? = nil
    ) {
        self.kind = kind
        self.peer = peer
        self.instance = instance
        self.name = name.clipped(toUTF8: Self.maximumNameBytes)
        self.versionID = versionID.clipped(toUTF8: Self.maximumVersionBytes)
        self.port = port
        self.interval = interval.isNaN ? Self.intervalRange.lowerBound : min(max(interval, Self.intervalRange.lowerBound), Self.intervalRange.upperBound)
        self.capabilities = capabilities.prefix(Self.maximumCapabilities).map { $0.clipped(toUTF8: Self.maximumCapabilityBytes) }
        self.fingerprint = fingerprint.flatMap(Self.fingerprint(from:))
    }

    /// A fingerprint as beacons carry it (lowercase), or nil when `text` is not 64 hex digits.
    public static func fingerprint(from text: String) -> String? {
        let hex = text.lowercased()
        return hex.utf8.count == 64 && hex.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) ? hex : nil
    }

    /// The beacon in `bytes`, bounded as the initializer bounds it; nil when the bytes are not a
    /// beacon (not JSON, another format, a field missing or of the wrong type, a peer or instance
    /// that is not a UUID, port 0, an interval that is not a positive number).
    public static func decode(_ bytes: [UInt8]) -> Beacon? {
        guard bytes.count <= maximumSize,
              let wire = try? JSONValueDecoder(limits: JSONLimits(maximumDepth: 4)).decode(Beacon.self, from: bytes),
              wire.format == formatTag, let peer = UUID(uuidString: wire.peer), let instance = UUID(uuidString: wire.instance),
              wire.port > 0, wire.interval > 0
        else { return nil }
        return Beacon(kind: wire.kind, peer: peer.uuidString, instance: instance.uuidString, name: wire.name, versionID: wire.versionID,
                      port: wire.port, interval: wire.interval, capabilities: wire.capabilities, fingerprint: wire.fingerprint)
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        writer.beginObject()
        writer.key("capabilities")
        writer.beginArray()
        capabilities.forEach { writer.string($0) }
        writer.endArray()
        if let fingerprint { writer.member("fingerprint", fingerprint) }
        writer.member("format", format)
        writer.member("instance", instance)
        writer.key("interval")
        writer.raw(Array(String(interval).utf8))
        writer.member("kind", kind.rawValue)
        writer.member("name", name)
        writer.member("peer", peer)
        writer.key("port")
        writer.raw(Array(String(port).utf8))
        writer.member("versionID", versionID)
        writer.endObject()
        return writer.bytes
    }
}
