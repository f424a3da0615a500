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
    /// The signer's public key (SubjectPublicKeyInfo, DER) in lowercase hex: `peer` is the ID it
    /// derives (Protocol.md, section 12.1). Absent in an unsigned (legacy) beacon.
    public var key: String?
    /// The signer's start number (one more at every start) and this beacon's number within the
    /// start: together they grow with every beacon signed, so a replay is recognised.
    public var boot: UInt64?
    public var sequence: UInt64?
    /// The key's Ed25519 signature of `signedMessage`, 128 lowercase hex digits.
    public var signature: String?

    enum CodingKeys: String, CodingKey {
        case format, kind, peer, instance, name, versionID, port, interval, capabilities, fingerprint, key, boot
        case sequence = "seq"
        case signature = "sig"
    }

    public init(
        kind: Kind, peer: String, instance: String, name: String, versionID: String, port: UInt16, interval: Double,
        capabilities: [String],
        fingerprint: String? = nil
    ) {
        self.kind = kind
        self.peer = peer
        self.instance = instance
        self.name = name.clipped(toUTF8: Self.maximumNameBytes)
        self.versionID = versionID.clipped(toUTF8: Self.maximumVersionBytes)
        self.port = port
        self.interval =
            interval.isNaN
            ? Self.intervalRange.lowerBound
            : min(max(interval, Self.intervalRange.lowerBound), Self.intervalRange.upperBound)
        self.capabilities = capabilities.prefix(Self.maximumCapabilities).map {
            $0.clipped(toUTF8: Self.maximumCapabilityBytes)
        }
        self.fingerprint = fingerprint.flatMap(Self.fingerprint(from:))
    }

    /// A fingerprint as beacons carry it (lowercase), or nil when `text` is not 64 hex digits.
    public static func fingerprint(from text: String) -> String? {
        let hex = text.lowercased()
        return hex.utf8.count == 64
            && hex.utf8.allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }) ? hex : nil
    }

    /// The beacon in `bytes`, bounded as the initializer bounds it; nil when the bytes are not a
    /// beacon (not JSON, another format, a field missing or of the wrong type, a peer or instance
    /// that is not a UUID, port 0, an interval that is not a positive number).
    public static func decode(_ bytes: [UInt8]) -> Beacon? {
        guard bytes.count <= maximumSize,
            let wire = try? JSONValueDecoder(limits: JSONLimits(maximumDepth: 4)).decode(Beacon.self, from: bytes),
            wire.format == formatTag, let peer = UUID(strict: wire.peer), let instance = UUID(strict: wire.instance),
            wire.port > 0, wire.interval > 0
        else { return nil }
        var beacon = Beacon(
            kind: wire.kind, peer: peer.uppercaseText, instance: instance.uppercaseText,
            name: wire.name,
            versionID: wire.versionID, port: wire.port, interval: wire.interval,
            capabilities: wire.capabilities, fingerprint: wire.fingerprint)
        // The signature covers the fields as they came, before they were cut to their caps.
        if let key = wire.key, let boot = wire.boot, let sequence = wire.sequence, let signature = wire.signature {
            beacon.key = key
            beacon.boot = boot
            beacon.sequence = sequence
            beacon.signature = signature
            beacon.receivedMessage = wire.signedMessage
        }
        return beacon
    }

    /// What the signature of a received beacon covers, computed from its fields as they came
    /// (`decode` cuts them to their caps after); nil for a beacon made here or an unsigned one.
    public private(set) var receivedMessage: [UInt8]?

    /// Tags the bytes a beacon's signature covers, so they can never be taken for other signed bytes.
    public static let signatureTag = "hexd-beacon-signature/1"

    /// The bytes the signature covers (Protocol.md, section 9): the tag, then kind, peer, instance,
    /// name, versionID, port, interval in whole milliseconds, the number of capabilities, each
    /// capability, fingerprint (empty when absent), key, boot and seq, each as its UTF-8 bytes
    /// after their count as two bytes, big-endian. Numbers are written in decimal. Nil when a
    /// field is missing or cannot be written so (a string over 65,535 bytes, an interval that is
    /// not a number of milliseconds).
    public var signedMessage: [UInt8]? {
        guard let key, let boot, let sequence, interval.isFinite, interval >= 0, interval < 1e12 else { return nil }
        let milliseconds = Int64((interval * 1_000).rounded())
        var fields = [
            Self.signatureTag, kind.rawValue, peer, instance, name, versionID, String(port),
            String(milliseconds),
            String(capabilities.count),
        ]
        fields += capabilities
        fields += [fingerprint ?? "", key, String(boot), String(sequence)]
        return SignedFields.message(fields)
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        writer.beginObject()
        writer.key("capabilities")
        writer.beginArray()
        capabilities.forEach { writer.string($0) }
        writer.endArray()
        if let boot {
            writer.key("boot")
            writer.raw(Array(String(boot).utf8))
        }
        if let fingerprint { writer.member("fingerprint", fingerprint) }
        writer.member("format", format)
        writer.member("instance", instance)
        writer.key("interval")
        writer.raw(Array(String(interval).utf8))
        if let key { writer.member("key", key) }
        writer.member("kind", kind.rawValue)
        writer.member("name", name)
        writer.member("peer", peer)
        writer.key("port")
        writer.raw(Array(String(port).utf8))
        if let sequence {
            writer.key("seq")
            writer.raw(Array(String(sequence).utf8))
        }
        if let signature { writer.member("sig", signature) }
        writer.member("versionID", versionID)
        writer.endObject()
        return writer.bytes
    }
}
