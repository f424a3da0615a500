import CLinux
import Glibc

/// A listening stream socket: TCP on an IPv4 or IPv6 address, or a Unix domain socket at a path.
public final class StreamListener: Sendable {
    public let socket: Socket
    /// The Unix socket's path, removed when the listener goes away.
    private let path: String?

    private init(socket: Socket, path: String?) {
        self.socket = socket
        self.path = path
    }

    deinit {
        if let path { unlink(path) }
    }

    /// Listens for TCP connections on `address`:`port` (port 0 picks a free one; see `port`), with
    /// the system's largest accept queue by default: a burst of connections (a storm of bare
    /// ClientHellos) then waits in the kernel instead of being dropped, and honest ones with it.
    /// An IPv6 listener takes IPv6 only (`IPV6_V6ONLY`), whatever `net.ipv6.bindv6only` says: IPv4
    /// has its own listener beside it, on the same port.
    public static func tcp(
        address: IPAddress = .anyV4, port: UInt16, backlog: Int32 = StreamListener.systemMaximumBacklog
    ) throws(SocketError) -> StreamListener {
        let socket = try Socket(domain: address.family, type: Int32(SOCK_STREAM.rawValue))
        try socket.setOption(SO_REUSEADDR)
        if case .v6 = address { try socket.setOption(IPV6_V6ONLY, level: Int32(IPPROTO_IPV6)) }
        try socket.bind(address, port: port)
        guard listen(socket.descriptor, backlog) == 0 else { throw SocketError("listen on port \(port)") }
        return StreamListener(socket: socket, path: nil)
    }

    /// The kernel's cap on an accept queue (`net.core.somaxconn`), read once; 4096 (Linux's
    /// default since 5.4) when it cannot be read.
    public static let systemMaximumBacklog: Int32 = {
        let descriptor = open("/proc/sys/net/core/somaxconn", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 4_096 }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return 4_096 }
        let digits = bytes.prefix(count).prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard let value = Int32(String(decoding: digits, as: UTF8.self)), value > 0 else { return 4_096 }
        return value
    }()

    /// Listens on a Unix domain socket at `path`, readable and writable by the owner only.
    /// A stale socket file at `path` (no process listening) is replaced.
    public static func unix(path: String, backlog: Int32 = 16) throws(SocketError) -> StreamListener {
        var address = try UnixAddress(path: path)
        let socket = try Socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue))
        unlink(path)
        let bound = address.withSocketAddress { Glibc.bind(socket.descriptor, $0, $1) }
        guard bound == 0 else { throw SocketError("bind \(path)") }
        guard chmod(path, 0o600) == 0, listen(socket.descriptor, backlog) == 0 else {
            let error = SocketError("listen on \(path)")
            unlink(path)
            throw error
        }
        return StreamListener(socket: socket, path: path)
    }

    /// The TCP port listened on.
    public var port: UInt16 { socket.localPort }

    /// Waits for the next connection.
    /// - Throws: `SocketError` with code `EMFILE`, `ENFILE`, `ENOBUFS` or `ENOMEM` when the process
    ///   or the system is out of descriptors or memory: the caller decides how to back off.
    public func accept() async throws -> Socket {
        while true {
            // Close-on-exec from the start: a link command spawned meanwhile cannot inherit it.
            let descriptor = accept4(
                socket.descriptor, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            if descriptor >= 0 {
                // The control socket's clients are the user's (`hexctl`): they may go on to the user's
                // tier, so that strangers filling the accepts' share do not lock them out.
                let keeping = path == nil ? DescriptorHeadroom.kept : DescriptorHeadroom.keptByOwnWork
                guard DescriptorHeadroom.allows(descriptor, keeping: keeping) else {
                    close(descriptor)
                    throw SocketError("accept", code: EMFILE, reason: DescriptorHeadroom.refusal(keeping: keeping))
                }
                let accepted = Socket(adopting: descriptor)
                if path == nil { accepted.sendSmallWritesAtOnce() }
                return accepted
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                try await waitUntil(.readable, descriptor: socket.descriptor, timeout: nil, operation: "accept")
            // Interrupted, a connection reset before it was taken, a network error pending on the
            // new connection (accept(2): to be treated as EAGAIN), or one a firewall forbade: go on
            // with the next. Any of these ending the accept loop would leave the port deaf.
            case EINTR, ECONNABORTED, EPROTO, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP,
                ENETUNREACH, EPERM:
                continue
            default: throw SocketError("accept")
            }
        }
    }
}

/// A `sockaddr_un` for a path, or for a name in Linux's abstract namespace, checked to fit.
struct UnixAddress {
    private var address = sockaddr_un()
    private var length = socklen_t(MemoryLayout<sockaddr_un>.size)

    init(path: String) throws(SocketError) {
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SocketError("use the Unix socket path \(path)", reason: "it must be 1 to \(capacity - 1) bytes long")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    }

    /// An abstract socket (`unix:abstract=` in a D-Bus address): a zero byte, then the name, and
    /// an address length that ends with the name (the rest of `sun_path` would be part of it).
    init(abstract name: String) throws(SocketError) {
        let bytes = [0] + Array(name.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count > 1, bytes.count <= capacity else {
            throw SocketError(
                "use the abstract Unix socket \(name)",
                reason: "it must be 1 to \(capacity - 1) bytes long")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
    }

    mutating func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        let length = length
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
