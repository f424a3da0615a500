import HexKit

/// A discovery datagram: who a daemon is and where it takes envelopes. Compact JSON, well under
/// 1 KiB (the name is cut to 200 bytes, the version to 40).
struct Beacon: Sendable, Codable, Equatable {
    static let formatTag = "hexd-beacon/1"
    /// The largest datagram read; a longer one is dropped as oversized.
    static let maximumSize = 1_024

    enum Kind: String, Sendable, Codable {
        /// "Here I am": sent at start in a burst, then every interval.
        case announce
        /// "Who is there?": sent at start; every daemon that hears it announces itself at once.
        case query
        /// "I am leaving": sent on a clean shutdown.
        case bye
    }

    var format = Beacon.formatTag
    var kind: Kind
    /// The stable peer UUID (uppercase), kept across restarts.
    var peer: String
    /// New at every start, so a restart is recognised.
    var instance: String
    var name: String
    var versionID: String
    /// The TCP port for envelopes.
    var port: UInt16
    /// Seconds between this daemon's announcements; it is lost after three missed ones.
    var interval: Double
    /// What the daemon speaks beyond the original app: `ack` (messageID and Ack).
    var capabilities: [String]

    init(kind: Kind, peer: String, instance: String, name: String, versionID: String, port: UInt16, interval: Double, capabilities: [String]) {
        self.kind = kind
        self.peer = peer
        self.instance = instance
        self.name = Self.clip(name, bytes: 200)
        self.versionID = Self.clip(versionID, bytes: 40)
        self.port = port
        self.interval = interval
        self.capabilities = capabilities
    }

    /// The beacon in `bytes`, or nil when they are not one (another format, a bad UUID, no port).
    static func decode(_ bytes: [UInt8]) -> Beacon? {
        guard let beacon = try? JSONDecoder().decode(Beacon.self, from: Data(bytes)),
              beacon.format == formatTag, UUID(uuidString: beacon.peer) != nil, beacon.port > 0,
              beacon.interval > 0, beacon.interval.isFinite
        else { return nil }
        return beacon
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map(Array.init) ?? []
    }

    /// `text` cut to at most `bytes` bytes of UTF-8, on a character boundary.
    private static func clip(_ text: String, bytes: Int) -> String {
        var clipped = ""
        for character in text {
            guard clipped.utf8.count + character.utf8.count <= bytes else { break }
            clipped.append(character)
        }
        return clipped
    }
}
