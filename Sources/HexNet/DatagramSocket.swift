import Glibc

/// A UDP socket for broadcast discovery.
///
/// Bound with `SO_REUSEADDR` and `SO_REUSEPORT`, so several daemons on one host can share the
/// discovery port: each receives every broadcast, while a unicast reaches only one of them.
public final class DatagramSocket: Sendable {
    public let socket: Socket

    /// A datagram as received.
    public struct Datagram: Sendable {
        public let bytes: [UInt8]
        public let sender: IPv4Address
        public let senderPort: UInt16
        /// The datagram was longer than the receive limit and has been cut to it.
        public let truncated: Bool
    }

    /// Binds `address`:`port` (port 0 picks a free one) with broadcast allowed.
    public init(address: IPv4Address = .any, port: UInt16) throws(SocketError) {
        socket = try Socket(domain: AF_INET, type: Int32(SOCK_DGRAM.rawValue))
        try socket.setOption(SO_REUSEADDR)
        try socket.setOption(SO_REUSEPORT)
        try socket.setOption(SO_BROADCAST)
        try socket.bind(address, port: port)
    }

    public var port: UInt16 { socket.localPort }

    /// Sends one datagram. A full send buffer drops it (discovery repeats itself) and is not
    /// an error; anything else is.
    public func send(_ bytes: [UInt8], to address: IPv4Address, port: UInt16) throws(SocketError) {
        var destination = address.socketAddress(port: port)
        let sent = withUnsafePointer(to: &destination) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard sent < 0 else { return }
        guard errno == EAGAIN || errno == EWOULDBLOCK else { throw SocketError("send a datagram to \(address):\(port)") }
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
            var sender = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            // MSG_TRUNC makes recvfrom return the datagram's real length even when it was cut.
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket.descriptor, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), $0, &length) }
                }
            }
            if count >= 0 {
                return Datagram(
                    bytes: Array(buffer.prefix(min(count, maximumLength))), sender: IPv4Address(sender.sin_addr),
                    senderPort: UInt16(bigEndian: sender.sin_port), truncated: count > maximumLength)
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                let left = deadline.map { $0 - .now }
                if let left, left <= .zero { return nil }
                do {
                    try await waitUntil(.readable, descriptor: socket.descriptor, timeout: left,
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
