import CLinux
import Glibc

/// A UDP socket for discovery: IPv4 with broadcast, or IPv6 (IPv6 only) with link-local multicast.
///
/// Bound with `SO_REUSEADDR` and `SO_REUSEPORT`, so several daemons on one host can share the
/// discovery port: each receives every broadcast and multicast, while a unicast reaches only one
/// of them.
public final class DatagramSocket: Sendable {
    public let socket: Socket

    /// A datagram as received.
    public struct Datagram: Sendable {
        public let bytes: [UInt8]
        /// Where it came from; an IPv6 link-local sender with the interface it arrived on.
        public let sender: IPAddress
        public let senderPort: UInt16
        /// The datagram was longer than the receive limit and has been cut to it.
        public let truncated: Bool
        /// The TTL (IPv4) or hop limit (IPv6) it arrived with; nil if the system did not say.
        /// 255 means it was sent on the link it arrived on (no router passed it on).
        public let hopLimit: Int?
        /// The index of the interface it arrived on; nil if the system did not say.
        public let interface: UInt32?
    }

    /// Binds `address`:`port` (port 0 picks a free one): IPv4 with broadcast allowed; IPv6 for
    /// IPv6 alone. Multicast is looped back to the host's other daemons and leaves with
    /// `multicastHops` as its TTL or hop limit: 1 for hexd's beacons (never routed), 255 for mDNS
    /// (RFC 6762, section 11, where receivers may check it).
    public init(address: IPAddress = .anyV4, port: UInt16, multicastHops: Int32 = 1) throws(SocketError) {
        socket = try Socket(domain: address.family, type: Int32(SOCK_DGRAM.rawValue))
        try socket.setOption(SO_REUSEADDR)
        try socket.setOption(SO_REUSEPORT)
        // Asked, not required: the system caps it at net.core.rmem_max (often 208 KiB).
        try? socket.setOption(SO_RCVBUF, Self.receiveBuffer)
        switch address {
        case .v4:
            let ipv4 = Int32(IPPROTO_IP)
            try socket.setOption(SO_BROADCAST)
            try socket.setOption(IP_MULTICAST_TTL, level: ipv4, multicastHops)
            try socket.setOption(IP_MULTICAST_LOOP, level: ipv4, 1)
            try socket.setOption(IP_RECVTTL, level: ipv4, 1)
            try socket.setOption(IP_PKTINFO, level: ipv4, 1)
        case .v6:
            let ipv6 = Int32(IPPROTO_IPV6)
            try socket.setOption(IPV6_V6ONLY, level: ipv6)
            try socket.setOption(IPV6_MULTICAST_HOPS, level: ipv6, multicastHops)
            try socket.setOption(IPV6_MULTICAST_LOOP, level: ipv6, 1)
            try socket.setOption(IPV6_RECVHOPLIMIT, level: ipv6, 1)
            try socket.setOption(IPV6_RECVPKTINFO, level: ipv6, 1)
        }
        try socket.bind(address, port: port)
    }

    public var port: UInt16 { socket.localPort }

    /// An IPv4 socket on `port`, shared with the other programs that share it; when one holds it
    /// without sharing, a socket on a free port instead, which sends as well but hears nothing
    /// sent to `port`, and why `port` could not be had.
    /// - Throws: `SocketError` when not even a free port can be had.
    public static func sharing(port: UInt16) throws(SocketError) -> (socket: DatagramSocket, refusal: SocketError?) {
        do {
            return (try DatagramSocket(port: port), nil)
        } catch {
            return (try DatagramSocket(port: 0), error)
        }
    }

    /// The receive buffer asked for: beacons come in bursts when many daemons start at once on a
    /// segment, and the default (208 KiB, about 90 beacons) overflows while a busy daemon waits
    /// for a core, where every datagram dropped is a peer found a few seconds late. 1 MiB holds
    /// about 450 beacons (the kernel counts each at about twice its size).
    public static let receiveBuffer: Int32 = 1 << 20

    /// Joins the IPv6 multicast `group` on the interface with index `interface` (an IPv6 socket);
    /// joining again where it is joined already is no error.
    public func join(_ group: IPv6Address, interface: UInt32) throws(SocketError) {
        var request = ipv6_mreq()
        withUnsafeMutableBytes(of: &request.ipv6mr_multiaddr) { $0.copyBytes(from: group.bytes) }
        request.ipv6mr_interface = interface
        let result = setsockopt(
            socket.descriptor, Int32(IPPROTO_IPV6), IPV6_JOIN_GROUP, &request,
            socklen_t(MemoryLayout<ipv6_mreq>.size))
        guard result == 0 || errno == EADDRINUSE else { throw SocketError("join \(group) on interface \(interface)") }
    }

    /// Joins the IPv4 multicast `group` on the interface with index `interface` (an IPv4 socket);
    /// joining again where it is joined already is no error.
    public func join(_ group: IPv4Address, interface: UInt32) throws(SocketError) {
        var request = ip_mreqn()
        request.imr_multiaddr = in_addr(s_addr: group.networkOrder)
        request.imr_ifindex = Int32(bitPattern: interface)
        let result = setsockopt(
            socket.descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request,
            socklen_t(MemoryLayout<ip_mreqn>.size))
        guard result == 0 || errno == EADDRINUSE else { throw SocketError("join \(group) on interface \(interface)") }
    }

    /// Sends one datagram to an IPv4 multicast group out of the interface with index `interface`.
    public func send(_ bytes: [UInt8], to group: IPv4Address, port: UInt16, interface: UInt32) throws(SocketError) {
        var request = ip_mreqn()
        request.imr_ifindex = Int32(bitPattern: interface)
        guard
            setsockopt(
                socket.descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request,
                socklen_t(MemoryLayout<ip_mreqn>.size)) == 0
        else {
            throw SocketError("send from interface \(interface)")
        }
        try send(bytes, to: .v4(group), port: port)
    }

    /// Sends one datagram (to an IPv6 multicast group: out of the interface its scope names). A
    /// full send buffer drops it (discovery repeats itself) and is not an error; anything else is.
    public func send(_ bytes: [UInt8], to address: IPAddress, port: UInt16) throws(SocketError) {
        let sent = address.withSocketAddress(port: port) { socketAddress, length in
            bytes.withUnsafeBytes {
                sendto(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
        guard sent < 0 else { return }
        guard errno == EAGAIN || errno == EWOULDBLOCK else {
            throw SocketError("send a datagram to \(Endpoint(address, port: port))")
        }
    }

    /// Waits for the next datagram, reading at most `maximumLength` bytes of it.
    public func receive(maximumLength: Int) async throws -> Datagram {
        while true {
            if let datagram = try await receive(maximumLength: maximumLength, before: nil) { return datagram }
        }
    }

    /// Waits for the next datagram until `deadline` (nil: no deadline), reading at most
    /// `maximumLength` bytes of it; nil once the deadline has come. A datagram already waiting
    /// is returned at once, whatever the deadline: a caller whose work is due still reads what
    /// arrived. The deadline is the reactor's, so that waiting for a datagram and for the
    /// caller's next job is one wait of one thread.
    public func receive(maximumLength: Int, before deadline: ContinuousClock.Instant?) async throws -> Datagram? {
        var buffer = [UInt8](repeating: 0, count: maximumLength)
        while true {
            var sender = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var hops: Int32 = -1
            var interface: UInt32 = 0
            // The datagram's real length, even when it was cut (MSG_TRUNC).
            let count = buffer.withUnsafeMutableBytes { bytes in
                hexd_receive_with_hops(
                    socket.descriptor, bytes.baseAddress, bytes.count, &sender, &length, &hops, &interface)
            }
            if count >= 0 {
                // A datagram from a family this socket cannot carry is not possible; one that
                // reads as no address is dropped like a malformed one.
                guard let (address, port) = IPAddress.from(sender) else { continue }
                return Datagram(
                    bytes: Array(buffer.prefix(min(count, maximumLength))), sender: address,
                    senderPort: port, truncated: count > maximumLength, hopLimit: hops >= 0 ? Int(hops) : nil,
                    interface: interface > 0 ? interface : nil)
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                let left = deadline.map { $0 - .now }
                if let left, left <= .zero { return nil }
                do {
                    try await waitUntil(
                        .readable, descriptor: socket.descriptor, timeout: left,
                        operation: "receive a datagram")
                } catch let error as SocketError where error.isTimeout {
                    return nil
                }
            case EINTR: continue
            default: throw SocketError("receive a datagram")
            }
        }
    }
}
