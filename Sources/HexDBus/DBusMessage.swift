/// One D-Bus message: a method call, its return or error, or a signal.
public struct DBusMessage: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    public var kind: Kind
    /// 0x1: no reply expected; 0x2: do not start a service for it.
    public var flags: UInt8 = 0
    public var serial: UInt32 = 0
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    public var sender: String?
    public var body: [DBusValue] = []

    public init(
        kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil,
        destination: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.destination = destination
        self.body = body
    }

    /// A method call.
    public static func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String,
        _ body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member, destination: destination,
            body: body)
    }

    public var signature: String { body.map { $0.type.description }.joined() }

    /// The largest message this client reads; D-Bus allows 128 MiB, but nothing hexd talks about
    /// comes near 1 MiB.
    public static let maximumBytes = 1 << 20

    private enum Field: UInt8 {
        case path = 1
        case interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// The message on the wire, little-endian.
    public func encoded() -> [UInt8] {
        var bodyWriter = DBusWriter()
        body.forEach { bodyWriter.write($0) }
        var fields: [DBusValue] = []
        func add(_ field: Field, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(field.rawValue), .variant(value)])) }
        }
        add(.path, path.map { .objectPath($0) })
        add(.interface, interface.map { .string($0) })
        add(.member, member.map { .string($0) })
        add(.errorName, errorName.map { .string($0) })
        add(.replySerial, replySerial.map { .uint32($0) })
        add(.destination, destination.map { .string($0) })
        add(.sender, sender.map { .string($0) })
        if !body.isEmpty { add(.signature, .signature(signature)) }
        var writer = DBusWriter()
        for byte in [UInt8(ascii: "l"), kind.rawValue, flags, 1] { writer.write(.byte(byte)) }
        writer.write(.uint32(UInt32(truncatingIfNeeded: bodyWriter.bytes.count)))
        writer.write(.uint32(serial))
        writer.write(.array(.structure([.byte, .variant]), fields))
        writer.pad(to: 8)
        return writer.bytes + bodyWriter.bytes
    }

    /// The whole length of the message whose first 16 bytes these are, or nil when they are not
    /// the start of a message.
    static func length(ofMessageStartingWith prefix: ArraySlice<UInt8>) throws(DBusError) -> Int {
        guard prefix.count >= 16 else { throw .malformed("a message shorter than its fixed header") }
        let start = prefix.startIndex
        let endian = prefix[start]
        guard endian == UInt8(ascii: "l") || endian == UInt8(ascii: "B") else {
            throw .malformed("an unknown byte order \(endian)")
        }
        var decoder = DBusDecoder(Array(prefix.prefix(16)), littleEndian: endian == UInt8(ascii: "l"), from: 4)
        let bodyLength = Int(try decoder.readUInt32())
        _ = try decoder.readUInt32()
        let fieldsLength = Int(try decoder.readUInt32())
        let headerEnd = (16 + fieldsLength + 7) / 8 * 8
        return headerEnd + bodyLength
    }

    /// Reads one whole message.
    /// - Throws: `DBusError.malformed` for anything the specification does not allow.
    public static func decode(_ bytes: [UInt8]) throws(DBusError) -> DBusMessage {
        let total = try length(ofMessageStartingWith: bytes[...])
        guard total == bytes.count else { throw .malformed("a message of \(bytes.count) bytes that says \(total)") }
        let littleEndian = bytes[0] == UInt8(ascii: "l")
        guard let kind = Kind(rawValue: bytes[1]) else { throw .malformed("an unknown message type \(bytes[1])") }
        guard bytes[3] == 1 else { throw .malformed("protocol version \(bytes[3])") }
        var header = DBusDecoder(bytes, littleEndian: littleEndian, from: 4)
        let bodyLength = Int(try header.readUInt32())
        var message = DBusMessage(kind: kind)
        message.flags = bytes[2]
        message.serial = try header.readUInt32()
        guard message.serial != 0 else { throw .malformed("a serial of 0") }
        guard case .array(_, let fields) = try header.read(.array(.structure([.byte, .variant]))) else {
            throw .malformed("no header fields")
        }
        var signature = ""
        for field in fields {
            guard case .structure(let pair) = field, pair.count == 2, case .byte(let code) = pair[0],
                case .variant(let value) = pair[1]
            else { continue }
            switch (Field(rawValue: code), value) {
            case (.path, .objectPath(let text)): message.path = text
            case (.interface, .string(let text)): message.interface = text
            case (.member, .string(let text)): message.member = text
            case (.errorName, .string(let text)): message.errorName = text
            case (.replySerial, .uint32(let number)): message.replySerial = number
            case (.destination, .string(let text)): message.destination = text
            case (.sender, .string(let text)): message.sender = text
            case (.signature, .signature(let text)): signature = text
            case (.unixFDs, _): throw .malformed("a message carrying file descriptors")
            case (nil, _): continue
            default: throw .malformed("header field \(code) of the wrong type")
            }
        }
        try header.skipPadding(to: 8)
        guard header.position + bodyLength == bytes.count else { throw .malformed("a body of the wrong length") }
        var body = DBusDecoder(bytes, littleEndian: littleEndian, from: header.position)
        // The body's alignment counts from its own start, which is 8-aligned in the message.
        for type in try DBusType.parse(signature) { message.body.append(try body.read(type)) }
        guard body.position == bytes.count else { throw .malformed("bytes after the body's values") }
        return message
    }
}
