/// Where a bus listens, from an address such as `DBUS_SESSION_BUS_ADDRESS` gives:
/// `unix:path=/run/user/1000/bus` or `unix:abstract=/tmp/dbus-X,guid=…`; of several (separated by
/// `;`) the first this client can use.
public enum DBusAddress: Sendable, Equatable, CustomStringConvertible {
    case path(String)
    case abstract(String)

    /// - Throws: `DBusError.address` when no address in `text` is a Unix socket.
    public init(parsing text: String) throws(DBusError) {
        for address in text.split(separator: ";") {
            guard address.hasPrefix("unix:") else { continue }
            var keys: [String: String] = [:]
            for pair in address.dropFirst(5).split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                keys[String(parts[0])] = Self.unescaped(parts[1])
            }
            if let path = keys["path"], !path.isEmpty {
                self = .path(path)
                return
            }
            if let name = keys["abstract"], !name.isEmpty {
                self = .abstract(name)
                return
            }
        }
        throw .address("no unix:path= or unix:abstract= address in '\(text.prefix(200))'")
    }

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` when the environment names one, else the socket
    /// the D-Bus specification fixes.
    public static func system(environment: [String: String]) throws(DBusError) -> DBusAddress {
        try DBusAddress(parsing: environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/var/run/dbus/system_bus_socket")
    }

    public var description: String {
        switch self {
        case .path(let path): "unix:path=\(path)"
        case .abstract(let name): "unix:abstract=\(name)"
        }
    }

    /// Values may escape bytes as `%XX`.
    private static func unescaped(_ value: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = value.utf8[...]
        while let byte = utf8.popFirst() {
            let next = Array(utf8.prefix(2))
            if byte == UInt8(ascii: "%"), next.count == 2, let high = hexDigit(next[0]), let low = hexDigit(next[1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x37
        case 0x61...0x66: byte - 0x57
        default: nil
        }
    }
}
