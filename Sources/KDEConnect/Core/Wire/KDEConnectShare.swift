import HexJSON
import HexKit

/// What a `kdeconnect.share.request` packet shares: a URL the receiver opens, a text it shows, or
/// a file whose bytes follow on a connection of their own (kdeconnect-kde `plugins/share`; the
/// Android app sends a shared text that parses as a URL as `url`, anything else as `text`).
public enum KDEConnectShare: Sendable, Equatable {
    case url(String)
    case text(String)
    /// A file: its name as the sender gives it (not yet a safe one), and its payload's size and
    /// port from the packet.
    case file(KDEConnectSharedFile)

    public static let packetType = "kdeconnect.share.request"
    /// The longest URL taken: longer is refused, not cut (a cut URL leads elsewhere).
    public static let maximumURLBytes = 8_192
    /// The longest text taken; a longer one is cut, on a character boundary.
    public static let maximumTextBytes = 256 * 1_024

    /// Why a packet is no share hexd takes.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case notAShare(String)
        case urlTooLong
        case noPayload
        case empty

        public var description: String {
            switch self {
            case .notAShare(let type): "a \(type) packet, not a share"
            case .urlTooLong: "a URL longer than \(KDEConnectShare.maximumURLBytes) bytes"
            case .noPayload: "a file with a size but no payload port"
            case .empty: "nothing shared (no url, text or filename)"
            }
        }
    }

    /// The share a packet carries.
    /// - Throws: `Refusal`.
    public init(_ packet: KDEConnectPacket) throws(Refusal) {
        guard packet.type == Self.packetType else { throw .notAShare(packet.type) }
        let body = packet.body
        // The apps' order: a file first, then a text, then a URL.
        if let name = body.string("filename") {
            let size = packet.payloadSize ?? 0
            // An empty file comes without a payload (the current apps send none for it).
            guard size == 0 || packet.payloadPort != nil else { throw .noPayload }
            self = .file(
                KDEConnectSharedFile(
                    name: name.clipped(toUTF8: KDEConnectSharedFile.maximumNameBytes), size: size,
                    port: size == 0 ? nil : packet.payloadPort,
                    numberOfFiles: body.integer("numberOfFiles", as: Int.self),
                    totalSize: body.integer("totalPayloadSize", as: Int64.self)))
        } else if let text = body.string("text") {
            self = .text(text.clipped(toUTF8: Self.maximumTextBytes))
        } else if let url = body.string("url") {
            guard url.utf8.count <= Self.maximumURLBytes else { throw .urlTooLong }
            self = .url(url)
        } else {
            throw .empty
        }
    }

    /// The share packet as a line; a file's payload is offered at `payloadPort`.
    /// - Parameter id: the sender's clock in milliseconds.
    public func encoded(id: Int64) -> [UInt8] {
        switch self {
        case .url(let url):
            KDEConnectPacket.encoded(type: Self.packetType, id: id) { $0.member("url", url) }
        case .text(let text):
            KDEConnectPacket.encoded(type: Self.packetType, id: id) { $0.member("text", text) }
        case .file(let file):
            KDEConnectPacket.encoded(
                type: Self.packetType, id: id, payloadSize: file.port == nil ? nil : file.size, payloadPort: file.port
            ) {
                $0.member("filename", file.name)
                if let count = file.numberOfFiles { $0.member("numberOfFiles", Int64(count)) }
                if let total = file.totalSize { $0.member("totalPayloadSize", total) }
            }
        }
    }
}

/// A file in a share: what the packet says of it.
public struct KDEConnectSharedFile: Sendable, Equatable {
    public var name: String
    public var size: Int64
    /// The sender's TCP port its bytes are fetched from, over TLS; nil for an empty file.
    public var port: UInt16?
    /// How many files the sender is sharing in all, and their total size, when it says.
    public var numberOfFiles: Int?
    public var totalSize: Int64?

    /// Longer names are cut (a safe name is made of it before it touches the disk).
    public static let maximumNameBytes = 1_024

    public init(name: String, size: Int64, port: UInt16?, numberOfFiles: Int? = nil, totalSize: Int64? = nil) {
        self.name = name
        self.size = size
        self.port = port
        self.numberOfFiles = numberOfFiles
        self.totalSize = totalSize
    }
}

/// A `kdeconnect.pair` packet: a request (`pair: true`, from the side asking), an acceptance
/// (`pair: true`, in answer), a refusal or an unpairing (`pair: false`). Protocol 8 dates a
/// request (`timestamp`, seconds since 1970), and the verification code covers it.
public struct KDEConnectPair: Sendable, Equatable {
    public var pair: Bool
    public var timestamp: Int64?

    public static let packetType = "kdeconnect.pair"

    public init(pair: Bool, timestamp: Int64? = nil) {
        self.pair = pair
        self.timestamp = timestamp
    }

    /// The pairing packet carries; nil when it is another packet or has no `pair`.
    public init?(_ packet: KDEConnectPacket) {
        guard packet.type == Self.packetType, let pair = packet.body.bool("pair") else { return nil }
        self.init(pair: pair, timestamp: packet.body.integer("timestamp", as: Int64.self))
    }

    public func encoded(id: Int64) -> [UInt8] {
        KDEConnectPacket.encoded(type: Self.packetType, id: id) {
            $0.member("pair", pair)
            if let timestamp { $0.member("timestamp", timestamp) }
        }
    }
}
