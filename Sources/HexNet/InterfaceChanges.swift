import CLinux
import Glibc

/// Tells when this host's links or addresses change (an interface up or down, an address added or
/// removed), through a netlink socket: discovery then announces at once on what appeared, where
/// reading the interfaces again at each beacon would leave a new link silent for an interval.
///
/// The messages are not parsed: any one means "read the interfaces again", and only the kernel
/// can write to this socket.
public final class InterfaceChanges: Sendable {
    private let socket: Socket

    /// - Throws: `SocketError` where netlink is not available (a sandbox): beacons then read the
    ///   interfaces at each round only.
    public init() throws(SocketError) {
        let descriptor = hexd_interface_watch_socket()
        guard descriptor >= 0 else { throw SocketError("watch the network interfaces") }
        socket = Socket(adopting: descriptor)
    }

    /// Waits until something changed, then reads the messages waiting (at most
    /// `messagesPerChange`, so that a flapping link cannot hold the caller). The kernel's having
    /// dropped messages (ENOBUFS) counts as a change.
    public func next() async throws {
        var buffer = [UInt8](repeating: 0, count: 8_192)
        var read = 0
        while read < Self.messagesPerChange {
            let count = buffer.withUnsafeMutableBytes {
                recv(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count >= 0 {
                read += 1
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                if read > 0 { return }
                try await waitUntil(
                    .readable, descriptor: socket.descriptor, timeout: nil,
                    operation: "watch the network interfaces")
            case ENOBUFS:
                read += 1
            case EINTR:
                continue
            default:
                throw SocketError("read what changed on the network interfaces")
            }
        }
    }

    static let messagesPerChange = 256
}
