// CLinux too, though nothing here is its own: without it, swiftc 6.3's whole-module (release)
// build of HexNet finds no SOCK_STREAM, SOCK_CLOEXEC or MSG_NOSIGNAL in this file since
// DatagramSocket.swift imports CLinux, whose shim includes sys/socket.h. Why is not understood.
import CLinux
import Glibc

/// Opens outgoing stream connections.
public enum StreamConnector {
    /// Connects over TCP to `endpoint`, resolving a host name first.
    /// - Parameters:
    ///   - source: the local address to connect from (tests play several hosts on loopback this
    ///     way); nil lets the system choose.
    ///   - keeping: the descriptors the connection must leave free (`DescriptorHeadroom`): fewer
    ///     only for what the user asked for.
    /// - Throws: `SocketError` (refused, unreachable, `timedOut`, unknown host, `EMFILE` within the
    ///   headroom).
    public static func tcp(
        to endpoint: Endpoint, timeout: Duration, from source: IPAddress? = nil,
        keeping: Int = DescriptorHeadroom.kept
    ) async throws -> Socket {
        let address = try await resolve(endpoint.host)
        let socket = try Socket(domain: address.family, type: Int32(SOCK_STREAM.rawValue), keeping: keeping)
        socket.sendSmallWritesAtOnce()
        if let source { try socket.bind(source, port: 0) }
        let result = address.withSocketAddress(port: endpoint.port) { connect(socket.descriptor, $0, $1) }
        if result != 0 {
            guard errno == EINPROGRESS else { throw SocketError("connect to \(endpoint)") }
            try await waitUntil(
                .writable, descriptor: socket.descriptor, timeout: timeout, operation: "connect to \(endpoint)")
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket.descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard failure == 0 else { throw SocketError("connect to \(endpoint)", code: failure) }
        }
        return socket
    }

    /// Connects to the Unix domain socket at `path`.
    public static func unix(path: String) throws(SocketError) -> Socket {
        try unix(UnixAddress(path: path), naming: path)
    }

    /// Connects to the Unix domain socket `name` of Linux's abstract namespace.
    public static func unix(abstract name: String) throws(SocketError) -> Socket {
        try unix(UnixAddress(abstract: name), naming: "@" + name)
    }

    private static func unix(_ address: UnixAddress, naming name: String) throws(SocketError) -> Socket {
        var address = address
        let socket = try Socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
        guard address.withSocketAddress({ connect(socket.descriptor, $0, $1) }) == 0 else {
            throw SocketError("connect to \(name)")
        }
        return socket
    }

    /// The address of `host`: an IPv4 or IPv6 address as it is, a name through the system
    /// resolver (which blocks, so it runs on the blocking pool), its first answer of either family
    /// (the resolver orders them as RFC 6724 and `gai.conf` say).
    public static func resolve(_ host: String) async throws -> IPAddress {
        if let address = IPAddress(host) { return address }
        return try await BlockingPool.shared.run {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var results: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, nil, &hints, &results)
            defer { freeaddrinfo(results) }
            var answer = results
            while let entry = answer?.pointee {
                if let address = entry.ai_addr, entry.ai_addrlen <= socklen_t(MemoryLayout<sockaddr_storage>.size) {
                    var storage = sockaddr_storage()
                    let bytes = UnsafeRawBufferPointer(start: address, count: Int(entry.ai_addrlen))
                    withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
                    if let (resolved, _) = IPAddress.from(storage) { return resolved }
                }
                answer = entry.ai_next
            }
            throw SocketError(
                "resolve \(host)",
                reason: status == 0 ? "no IPv4 or IPv6 address" : String(cString: gai_strerror(status)))
        }
    }
}
