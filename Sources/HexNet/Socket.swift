// CLinux too, though nothing here is its own: without it, swiftc 6.3's whole-module (release)
// build of HexNet finds no SOCK_STREAM, SOCK_CLOEXEC or MSG_NOSIGNAL in this file since
// DatagramSocket.swift imports CLinux, whose shim includes sys/socket.h. Why is not understood.
import CLinux
import Glibc

/// The owner of one non-blocking socket file descriptor.
///
/// The descriptor is closed only when this object goes away, so it can never be reused while a
/// task still waits on it; `shutdown()` is how to wake such a task early.
public final class Socket: Sendable {
    let descriptor: Int32

    /// Takes ownership of `descriptor` and makes it non-blocking and close-on-exec.
    init(adopting descriptor: Int32) {
        self.descriptor = descriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    /// A new socket of `domain` (AF_INET, AF_INET6, AF_UNIX) and `type` (SOCK_STREAM, SOCK_DGRAM), created
    /// close-on-exec at once, so a process spawned meanwhile cannot inherit it.
    /// - Parameter keeping: the descriptors it must leave free (`DescriptorHeadroom`).
    /// - Throws: `SocketError`, with code `EMFILE` also when the socket would take one of them.
    convenience init(domain: Int32, type: Int32, keeping: Int = DescriptorHeadroom.kept) throws(SocketError) {
        let descriptor = Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("create a socket") }
        guard DescriptorHeadroom.allows(descriptor, keeping: keeping) else {
            close(descriptor)
            throw SocketError("create a socket", code: EMFILE, reason: DescriptorHeadroom.refusal(keeping: keeping))
        }
        self.init(adopting: descriptor)
    }

    deinit { close(descriptor) }

    /// Stops both directions: a task waiting to read wakes and sees the end of the stream.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Stops sending only: the peer reads the end of the stream, and can still answer.
    public func shutdownWrite() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Makes closing this socket reset the connection rather than end it: nothing more is sent
    /// or kept for it (no FIN, no TIME_WAIT on this side), which is all a connection refused
    /// before it said anything is owed.
    public func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Turns off Nagle's algorithm on a TCP socket. The protocols here are request and answer:
    /// a TLS handshake writes several small records in a row, and Nagle holding them back for the
    /// peer's delayed ACK would add some 40 ms to every exchange.
    func sendSmallWritesAtOnce() {
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Whether the connection is idle and still open, checked without waiting: nothing to read
    /// and no hang-up. A connection kept for reuse that fails this was closed by the peer (or
    /// carries bytes nobody asked for) and must not be written to.
    public var isQuietAndOpen: Bool {
        // POLLRDHUP (the peer shut down its sending side): Linux's value, which <poll.h>
        // defines only under _GNU_SOURCE.
        let peerHungUp: Int16 = 0x2000
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN) | peerHungUp, revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    /// The remote end of a connected TCP socket (`192.0.2.1:18521`, `[fe80::1%eth0]:18521`), or
    /// nil (a Unix socket).
    public var remoteEndpoint: Endpoint? {
        name(getpeername).map { Endpoint($0.address, port: $0.port) }
    }

    /// The remote address of a connected TCP socket; nil for a Unix socket.
    public var remoteAddress: IPAddress? { name(getpeername)?.address }

    /// The address and port `call` (getpeername, getsockname) gives, of either family.
    private func name(
        _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> (address: IPAddress, port: UInt16)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, &length) }
        }
        return result == 0 ? IPAddress.from(storage) : nil
    }

    /// Writes `line` followed by `\n`.
    /// - Parameter timeout: how long one wait for the peer to read may last.
    public func writeLine(_ line: some Collection<UInt8>, timeout: Duration?) async throws {
        try await write(Array(line) + [UInt8(ascii: "\n")], timeout: timeout)
    }

    /// Has the kernel probe an idle TCP connection: after `idle` seconds of silence, every
    /// `interval` seconds, `probes` times, then fail it; and fail it when sent data stays
    /// unacknowledged for as long. A peer that vanished (suspended, off the network) is then seen
    /// gone within about a minute, as KDE Connect's apps see it.
    public func keepAlive(idle: Int32, interval: Int32, probes: Int32) throws(SocketError) {
        try setOption(SO_KEEPALIVE)
        try setOption(TCP_KEEPIDLE, level: Int32(IPPROTO_TCP), idle)
        try setOption(TCP_KEEPINTVL, level: Int32(IPPROTO_TCP), interval)
        try setOption(TCP_KEEPCNT, level: Int32(IPPROTO_TCP), probes)
        try setOption(TCP_USER_TIMEOUT, level: Int32(IPPROTO_TCP), (idle + interval * probes) * 1_000)
    }

    func setOption(_ option: Int32, level: Int32 = SOL_SOCKET, _ value: Int32 = 1) throws(SocketError) {
        var value = value
        guard setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError("set socket option \(option)")
        }
    }

    func bind(_ address: IPAddress, port: UInt16) throws(SocketError) {
        let result = address.withSocketAddress(port: port) { Glibc.bind(descriptor, $0, $1) }
        guard result == 0 else { throw SocketError("bind \(Endpoint(address, port: port))") }
    }

    /// The port this socket is bound to (useful after binding port 0).
    public var localPort: UInt16 {
        name(getsockname)?.port ?? 0
    }

    /// The next byte the peer sent, left unread (one protocol or another is chosen by it); nil
    /// at the end of the stream.
    /// - Parameter timeout: how long to wait for it.
    public func peek(timeout: Duration?) async throws -> UInt8? {
        while true {
            var byte: UInt8 = 0
            let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK))
            if count == 1 { return byte }
            if count == 0 { return nil }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                try await waitUntil(.readable, descriptor: descriptor, timeout: timeout, operation: "read")
            case EINTR: continue
            default: throw SocketError("read")
            }
        }
    }

    /// Returns when the peer has closed its end of the connection entirely (its process may have
    /// ended), or when the task is cancelled. Nothing is read. A peer that only stopped sending (a
    /// half-close) can still read an answer, so it is not taken as gone.
    ///
    /// The kernel reports such a close as POLLHUP on Unix stream sockets; on TCP only a reset
    /// does (a FIN is a half-close), so this is meant for the control socket.
    public func waitForHangUp() async {
        while !Task.isCancelled {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, 0)
            if ready < 0 && errno != EINTR { return }
            if Int32(request.revents) & (POLLHUP | POLLERR | POLLNVAL) != 0 { return }
            if Int32(request.revents) & POLLIN == 0 {
                // Nothing to read: sleep until something arrives (a hang-up makes it readable too).
                try? await waitUntil(.readable, descriptor: descriptor, timeout: nil, operation: "watch for a hang-up")
            } else {
                // A next request, or a half-close, waits to be read: readiness will not change
                // until it is, so look again in a moment.
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Linux's `POLLRDHUP`, which Glibc declares only with `_GNU_SOURCE`: the peer stopped sending.
    private static let peerStoppedSending: Int16 = 0x2000

    /// Returns when the peer has stopped sending (a TCP FIN, whatever it sent before it is still
    /// unread: `POLLRDHUP`) or the connection failed, or when the task is cancelled. Nothing is
    /// read: for a server whose client has sent its whole request and waits for the answer, this
    /// is the client giving up.
    public func waitForPeerClose() async {
        while !Task.isCancelled {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN) | Self.peerStoppedSending, revents: 0)
            let ready = poll(&request, 1, 0)
            if ready < 0 && errno != EINTR { return }
            if request.revents & Self.peerStoppedSending != 0
                || Int32(request.revents) & (POLLHUP | POLLERR | POLLNVAL) != 0
            {
                return
            }
            if Int32(request.revents) & POLLIN == 0 {
                // Nothing to read: sleep until something arrives (a FIN makes it readable too). A
                // wait that fails (cancelled, or the reactor refused the descriptor) ends the watch.
                do {
                    try await waitUntil(.readable, descriptor: descriptor, timeout: nil, operation: "watch for a close")
                } catch {
                    return
                }
            } else {
                // Bytes wait unread (a TLS alert before the FIN): readiness will not change until
                // they are read, so look again in a moment.
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Reads what is available, at most `maximumCount` bytes, and hands them to `take` (they are
    /// valid only during the call); waits while nothing is.
    /// - Returns: how many bytes were read, 0 at the end of the stream.
    public func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void) async throws
        -> Int
    {
        while true {
            // A buffer only for the read itself, so no connection keeps one while it waits.
            let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumCount) { buffer in
                let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                if count > 0 { take(UnsafeBufferPointer(rebasing: buffer[..<count])) }
                return count
            }
            if count >= 0 { return count }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                try await waitUntil(.readable, descriptor: descriptor, timeout: timeout, operation: "read")
            case EINTR: continue
            default: throw SocketError("read")
            }
        }
    }

    /// Writes all of `bytes`, waiting whenever the peer is not reading.
    /// - Parameter timeout: how long one wait for the peer may last.
    public func write(_ bytes: [UInt8], timeout: Duration?) async throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count >= 0 {
                offset += count
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                try await waitUntil(.writable, descriptor: descriptor, timeout: timeout, operation: "write")
            case EINTR: continue
            default: throw SocketError("write")
            }
        }
    }
}
