import HexJSON
import HexKit

/// One KDE Connect packet: a JSON object on one line, `{"id", "type", "body", "payloadSize"?,
/// "payloadTransferInfo"?}` (kdeconnect-kde `core/networkpacket.cpp`; KDE's kdeconnect-meta
/// `protocol.md`). `id` is the sender's clock in milliseconds, written and never read.
///
/// Anyone on the LAN can send one, so a line is read only within a size cap, by hexd's own JSON
/// reader, shallow, and a packet that is not an object with a `kdeconnect.` type and a body is
/// refused with the reason.
public struct KDEConnectPacket: Sendable, Equatable {
    /// `kdeconnect.<plugin>[.<action>]`: `kdeconnect.identity`, `kdeconnect.pair`,
    /// `kdeconnect.share.request`.
    public var type: String
    public var body: JSONObject
    /// The size of the payload that follows on a connection of its own, when there is one; -1
    /// (sent by the apps for a stream of unknown length) reads as nil.
    public var payloadSize: Int64?
    /// Where the payload is fetched from: the sender's TCP port (`payloadTransferInfo.port`).
    public var payloadPort: UInt16?

    /// The longest line read as a packet once a link is up (a shared text travels inside one).
    public static let maximumSize = 1 << 20
    /// The longest identity line (KDE's `lanlinkprovider.cpp` aborts past 8 KiB).
    public static let maximumIdentitySize = 8_192
    /// Deep enough for any packet the share and pairing plugins send; a body of nested arrays is
    /// refused before it costs anything.
    static let limits = JSONLimits(maximumDepth: 6)

    public init(type: String, body: JSONObject = JSONObject(), payloadSize: Int64? = nil, payloadPort: UInt16? = nil) {
        self.type = type
        self.body = body
        self.payloadSize = payloadSize
        self.payloadPort = payloadPort
    }

    /// Why a line is no packet.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case tooLong(Int)
        case notJSON(String)
        case notAPacket(String)

        public var description: String {
            switch self {
            case .tooLong(let count): "a packet of \(count) bytes, past the cap"
            case .notJSON(let reason): "not JSON: \(reason)"
            case .notAPacket(let reason): "not a KDE Connect packet: \(reason)"
            }
        }
    }

    /// The packet `line` (without its line end) holds.
    /// - Throws: `Refusal` when it is longer than `maximumSize`, not JSON, or not a packet.
    public static func decode(_ line: some Collection<UInt8>, maximumSize: Int = maximumSize) throws(Refusal)
        -> KDEConnectPacket
    {
        guard line.count <= maximumSize else { throw .tooLong(line.count) }
        let value: JSONValue
        do {
            value = try JSONValue.parse(line, limits: limits)
        } catch {
            throw .notJSON("\(error)")
        }
        guard case .object(let object) = value else { throw .notAPacket("not an object") }
        guard let type = object.string("type"), type.hasPrefix("kdeconnect."), type.utf8.count <= 64 else {
            throw .notAPacket("no kdeconnect. type")
        }
        guard let body = object.object("body") else { throw .notAPacket("no body") }
        let size = object.integer("payloadSize", as: Int64.self)
        return KDEConnectPacket(
            type: type, body: body, payloadSize: size.flatMap { $0 >= 0 ? $0 : nil },
            payloadPort: object.object("payloadTransferInfo")?.integer("port", as: UInt16.self))
    }

    /// A packet as a line, its line end included.
    /// - Parameters:
    ///   - id: the sender's clock in milliseconds since 1970.
    ///   - body: writes the body's members (the object around them is written here).
    public static func encoded(
        type: String, id: Int64, payloadSize: Int64? = nil, payloadPort: UInt16? = nil,
        body: (inout JSONWriter) -> Void
    ) -> [UInt8] {
        var writer = JSONWriter(escapeSlashes: false)
        writer.beginObject()
        writer.member("id", id)
        writer.member("type", type)
        writer.key("body")
        writer.beginObject()
        body(&writer)
        writer.endObject()
        if let payloadSize {
            writer.member("payloadSize", payloadSize)
            if let payloadPort {
                writer.key("payloadTransferInfo")
                writer.beginObject()
                writer.member("port", Int64(payloadPort))
                writer.endObject()
            }
        }
        writer.endObject()
        return writer.bytes + [UInt8(ascii: "\n")]
    }
}

extension JSONObject {
    /// The strings of the array at `key`, at most `count` of them, each at most `bytes` long (a
    /// longer one is left out); an absent or mistyped member reads as empty.
    func strings(_ key: String, atMost count: Int, ofAtMost bytes: Int) -> [String] {
        guard case .array(let elements)? = self[key] else { return [] }
        var strings: [String] = []
        for case .string(let string) in elements where string.utf8.count <= bytes {
            guard strings.count < count else { break }
            strings.append(string)
        }
        return strings
    }
}
