import Glibc

/// An IP address of either family. An IPv6 address carries the interface it is scoped to when it
/// is link-local: `fe80::1` is only reachable through the interface it was seen on, and names it
/// when printed (`fe80::1%eth0`).
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(IPv4Address)
    case v6(IPv6Address)

    /// Parses `192.168.1.20`, `fd00::2` or `fe80::1%eth0` (a zone by interface name or index);
    /// nil for anything else, a host name included.
    public init?(_ text: String) {
        if let address = IPv4Address(text) {
            self = .v4(address)
        } else if let address = IPv6Address(text) {
            self = .v6(address)
        } else {
            return nil
        }
    }

    public static let anyV4 = IPAddress.v4(.any)
    public static let anyV6 = IPAddress.v6(.any)
    /// 127.0.0.1.
    public static let loopback = IPAddress.v4(.loopback)
    /// ::1.
    public static let loopbackV6 = IPAddress.v6(.loopback)

    public var description: String {
        switch self {
        case .v4(let address): address.description
        case .v6(let address): address.description
        }
    }

    public var isLoopback: Bool {
        switch self {
        case .v4(let address): address.networkOrder.bigEndian >> 24 == 127
        case .v6(let address): address == .loopback
        }
    }

    /// The network a host on the LAN can hold addresses in: this address's /24 (IPv4) or /64
    /// (IPv6, without its zone), its host bits zero. Budgets per prefix bound what a host that
    /// took many addresses of its subnet can spend.
    public var prefix: IPAddress {
        switch self {
        case .v4(let address): .v4(IPv4Address(networkOrder: address.networkOrder & UInt32(0xFFFF_FF00).bigEndian))
        case .v6(let address): .v6(IPv6Address(bytes: Array(address.bytes.prefix(8)) + Array(repeating: 0, count: 8)))
        }
    }

    /// The address family, for `socket(2)`.
    var family: Int32 {
        switch self {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    /// Calls `body` with this address and `port` as a `sockaddr` and its length.
    func withSocketAddress<T>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        switch self {
        case .v4(let address):
            var socketAddress = address.socketAddress(port: port)
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
            }
        case .v6(let address):
            var socketAddress = address.socketAddress(port: port)
            let length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
            }
        }
    }

    /// The address and port a `sockaddr` of either family holds; nil for another family.
    static func from(_ storage: sockaddr_storage) -> (address: IPAddress, port: UInt16)? {
        var storage = storage
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            switch family {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    (.v4(IPv4Address($0.pointee.sin_addr)), UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    (IPAddress(unmapping: IPv6Address($0.pointee)), UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default:
                nil
            }
        }
    }

    /// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as a dual-stack socket reports an IPv4
    /// peer) as the IPv4 address it is; any other as itself.
    init(unmapping address: IPv6Address) {
        let bytes = address.bytes
        if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            let word = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
            self = .v4(IPv4Address(networkOrder: word.bigEndian))
        } else {
            self = .v6(address)
        }
    }
}

/// An IPv6 address and, for a scoped (link-local) one, the index of its interface.
public struct IPv6Address: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes in network order.
    public let bytes: [UInt8]
    /// The interface index (`sin6_scope_id`); 0 for none.
    public let scope: UInt32

    init(bytes: [UInt8], scope: UInt32 = 0) {
        self.bytes = bytes
        self.scope = scope
    }

    init(_ address: sockaddr_in6) {
        var address = address
        bytes = withUnsafeBytes(of: &address.sin6_addr) { Array($0) }
        scope = address.sin6_scope_id
    }

    /// Parses `fd00::2`, `fe80::1%eth0` or `fe80::1%2`; nil for anything else, and for a zone
    /// that names no interface of this host.
    public init?(_ text: String) {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var address = in6_addr()
        guard let literal = parts.first, inet_pton(AF_INET6, String(literal), &address) == 1 else { return nil }
        var scope: UInt32 = 0
        if parts.count == 2 {
            let zone = String(parts[1])
            guard !zone.isEmpty else { return nil }
            scope = UInt32(zone) ?? if_nametoindex(zone)
            guard scope != 0 else { return nil }
        }
        self.init(bytes: withUnsafeBytes(of: &address) { Array($0) }, scope: scope)
    }

    public static let any = IPv6Address(bytes: [UInt8](repeating: 0, count: 16))
    public static let loopback = IPv6Address(bytes: [UInt8](repeating: 0, count: 15) + [1])

    /// The same address without its zone: what a host's list of its own addresses holds.
    public var unscoped: IPv6Address { IPv6Address(bytes: bytes) }

    /// The same address on the interface whose index is `scope`: where a datagram from it came in.
    public func scoped(to scope: UInt32) -> IPv6Address { IPv6Address(bytes: bytes, scope: scope) }

    /// Whether the first `length` bits of this address and of `other` are the same (the zones
    /// aside): whether it is within `other`'s prefix of that length. False for a length over 128.
    public func sharesPrefix(of length: Int, with other: IPv6Address) -> Bool {
        guard (0...128).contains(length), bytes.count == 16, other.bytes.count == 16 else { return false }
        let whole = length / 8
        guard bytes.prefix(whole) == other.bytes.prefix(whole) else { return false }
        let bits = length % 8
        guard bits > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - bits)
        return bytes[whole] & mask == other.bytes[whole] & mask
    }

    /// Whether it is link-local (`fe80::/10`): reachable only through one interface.
    public var isLinkLocal: Bool { bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 }

    public var description: String {
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return "?" }
        let literal = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard scope != 0 else { return literal }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let zone =
            if_indextoname(scope, &name) != nil
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : String(scope)
        return literal + "%" + zone
    }

    /// A `sockaddr_in6` for this address and `port`.
    func socketAddress(port: UInt16) -> sockaddr_in6 {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
        address.sin6_scope_id = scope
        return address
    }
}
