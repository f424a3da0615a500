import Glibc

/// Opens outgoing stream connections.
public enum StreamConnector {
    /// Connects over TCP to `endpoint`, resolving a host name first.
    /// - Parameter source: the local address to connect from (tests play several hosts on
    ///   loopback this way); nil lets the system choose.
    /// - Throws: `SocketError` (refused, unreachable, `timedOut`, unknown host).
    public static func tcp(to endpoint: Endpoint, timeout: Duration, from source: IPv4Address? = nil) async throws -> Socket {
        let address = try await resolve(endpoint.host)
        let socket = try Socket(domain: AF_INET, type: Int32(SOCK_STREAM.rawValue))
        socket.sendSmallWritesAtOnce()
        if let source { try socket.bind(source, port: 0) }
        var socketAddress = address.socketAddress(port: endpoint.port)
        let result = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            guard errno == EINPROGRESS else { throw SocketError("connect to \(endpoint)") }
            try await waitUntil(.writable, descriptor: socket.descriptor, timeout: timeout, operation: "connect to \(endpoint)")
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

    /// The IPv4 address of `host`: a dotted-decimal address as it is, a name through the system
    /// resolver (which blocks, so it runs on the blocking pool).
    public static func resolve(_ host: String) async throws -> IPv4Address {
        if let address = IPv4Address(host) { return address }
        return try await BlockingPool.shared.run {
            var hints = addrinfo()
            hints.ai_family = AF_INET
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var results: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, nil, &hints, &results)
            defer { freeaddrinfo(results) }
            guard status == 0, let address = results?.pointee.ai_addr else {
                throw SocketError("resolve \(host)", reason: String(cString: gai_strerror(status)))
            }
            return IPv4Address(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr })
        }
    }
}
