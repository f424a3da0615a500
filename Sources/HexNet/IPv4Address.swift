import Glibc

/// An IPv4 address. hexd speaks IPv4: LAN broadcast discovery has no IPv6 counterpart.
public struct IPv4Address: Sendable, Hashable, CustomStringConvertible {
    /// The address in network byte order, as `in_addr.s_addr` holds it.
    let networkOrder: UInt32

    init(networkOrder: UInt32) { self.networkOrder = networkOrder }

    init(_ address: in_addr) { networkOrder = address.s_addr }

    /// Parses dotted decimal (`192.168.1.20`); nil for anything else.
    public init?(_ text: String) {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        networkOrder = address.s_addr
    }

    /// The 4 bytes in network order.
    public var bytes: [UInt8] { withUnsafeBytes(of: networkOrder) { Array($0) } }

    /// The address of `bytes` in network order; nil unless there are 4.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 else { return nil }
        networkOrder = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    /// The address `a.b.c.d`, for constants (`IPv4Address(224, 0, 0, 167)`).
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        networkOrder = (UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)).bigEndian
    }

    public static let any = IPv4Address(networkOrder: 0)
    public static let loopback = IPv4Address(networkOrder: UInt32(0x7F00_0001).bigEndian)
    /// 255.255.255.255: leaves through the default interface only.
    public static let limitedBroadcast = IPv4Address(networkOrder: UInt32.max)

    public var description: String {
        var address = in_addr(s_addr: networkOrder)
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A `sockaddr_in` for this address and `port`.
    func socketAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: networkOrder)
        return address
    }
}
