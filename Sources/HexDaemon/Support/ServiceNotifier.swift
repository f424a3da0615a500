import Glibc

/// Tells a service manager how the daemon is doing, as systemd's `Type=notify` expects: one
/// datagram (`READY=1`, `STOPPING=1`) to the Unix socket named by `$NOTIFY_SOCKET`. Without that
/// variable (not started by systemd, or another `Type`) it does nothing.
struct ServiceNotifier {
    /// The socket's address; a leading `@` names an abstract socket.
    let path: String?

    init(environment: [String: String]) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sends `state`; failures are ignored (the manager will time out and say so).
    func notify(_ state: String) {
        guard let path else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL), $0, length)
            }
        }
    }
}
