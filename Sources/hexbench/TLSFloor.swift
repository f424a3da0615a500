import COpenSSL
import Foundation
import Glibc

/// OpenSSL's own cost of the exchange `hexbench transfer` times over resumed TLS, with nothing of
/// hexd's around it: a client and a server thread in this process, blocking sockets on loopback,
/// hexd's settings that shape a handshake (TLS 1.3, Ed25519 certificates both ways, stateful
/// tickets, one per connection, each used once) but none that only add to it (hexd also frees a
/// connection's buffers while it idles), and a line and its reply; against the same without TLS.
/// What TLS costs here is the least a resumed connection can cost over a plaintext one.
enum TLSFloor {
    /// Median milliseconds of `count` connections each way: (resumed TLS, plaintext).
    static func measure(
        count: Int, keyPath: String, certificatePath: String
    ) async throws -> (tls: Double, plain: Double) {
        let tls = try await run(count: count, tls: (keyPath, certificatePath))
        let plain = try await run(count: count, tls: nil)
        return (tls, plain)
    }

    private static func run(count: Int, tls files: (key: String, certificate: String)?) async throws -> Double {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw BenchFailure("socket: errno \(errno)") }
        defer {
            // Wakes the server thread should the client have given up before its last connection.
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { throw BenchFailure("listen on loopback: errno \(errno)") }
        let contexts = try files.map { try Contexts(key: $0.key, certificate: $0.certificate) }
        let target = address
        // One more than measured: the first connection makes the full handshake.
        Thread { serve(listener, connections: count + 1, context: contexts?.server) }.start()
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try dial(target, connections: count + 1, context: contexts?.client)
                    })
            }.start()
        }
    }

    /// A run's two contexts, with hexd's settings, freed with it.
    private final class Contexts: @unchecked Sendable {
        // Unchecked: configured before either thread starts, and only read after.
        let server: OpaquePointer
        let client: OpaquePointer

        init(key: String, certificate: String) throws {
            server = try TLSFloor.context(server: true, key: key, certificate: certificate)
            do {
                client = try TLSFloor.context(server: false, key: key, certificate: certificate)
            } catch {
                SSL_CTX_free(server)
                throw error
            }
        }

        deinit {
            SSL_CTX_free(server)
            SSL_CTX_free(client)
        }
    }

    private static func context(server: Bool, key: String, certificate: String) throws -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_method()) else { throw BenchFailure("SSL_CTX_new") }
        let idContext: [UInt8] = Array("floor".utf8)
        guard hexd_ssl_ctx_require_tls13(context) == 1,
            SSL_CTX_use_certificate_file(context, certificate, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_set_num_tickets(context, 1) == 1,
            SSL_CTX_set_session_id_context(context, idContext, UInt32(idContext.count)) == 1
        else {
            SSL_CTX_free(context)
            throw BenchFailure("configure an SSL_CTX")
        }
        hexd_ssl_ctx_require_peer_certificate(context)
        _ =
            server
            ? hexd_ssl_ctx_keep_server_sessions(context, 1_024)
            : hexd_ssl_ctx_keep_client_sessions_outside(context)
        return context
    }

    /// Accepts `connections`, each answering one line with a reply of 250 bytes.
    private static func serve(_ listener: Int32, connections: Int, context: OpaquePointer?) {
        var line = [UInt8](repeating: 0, count: 4_096)
        let reply = [UInt8](repeating: UInt8(ascii: "a"), count: 249) + [UInt8(ascii: "\n")]
        for _ in 0..<connections {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            noDelay(connection)
            if let context, let ssl = SSL_new(context) {
                SSL_set_fd(ssl, connection)
                if SSL_accept(ssl) == 1, SSL_read(ssl, &line, Int32(line.count)) > 0 {
                    _ = SSL_write(ssl, reply, Int32(reply.count))
                }
                SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN)
                SSL_free(ssl)
            } else if read(connection, &line, line.count) > 0 {
                _ = write(connection, reply, reply.count)
            }
            close(connection)
        }
    }

    /// Connects `connections` times, each resuming the session the one before it got, writing a
    /// line of 350 bytes and reading the reply; the median milliseconds, the first left out.
    private static func dial(_ address: sockaddr_in, connections: Int, context: OpaquePointer?) throws -> Double {
        var address = address
        let line = [UInt8](repeating: UInt8(ascii: "s"), count: 349) + [UInt8(ascii: "\n")]
        var reply = [UInt8](repeating: 0, count: 4_096)
        var session: OpaquePointer?
        defer { if let session { SSL_SESSION_free(session) } }
        var times: [Double] = []
        for index in 0..<connections {
            let start = ContinuousClock.now
            let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(connection) }
            noDelay(connection)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { throw BenchFailure("connect: errno \(errno)") }
            if let context {
                guard let ssl = SSL_new(context) else { throw BenchFailure("SSL_new") }
                defer {
                    SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN)
                    SSL_free(ssl)
                }
                SSL_set_fd(ssl, connection)
                if let session { _ = SSL_set_session(ssl, session) }
                guard SSL_connect(ssl) == 1, SSL_write(ssl, line, Int32(line.count)) > 0,
                    SSL_read(ssl, &reply, Int32(reply.count)) > 0
                else { throw BenchFailure("a TLS exchange failed") }
                guard index == 0 || SSL_session_reused(ssl) == 1 else {
                    throw BenchFailure("a session was not resumed")
                }
                // Read after the reply: the ticket that came with it, for the next connection.
                if let session { SSL_SESSION_free(session) }
                session = SSL_get1_session(ssl)
            } else {
                guard write(connection, line, line.count) == line.count,
                    read(connection, &reply, reply.count) > 0
                else {
                    throw BenchFailure("a plaintext exchange failed")
                }
            }
            if index > 0 { times.append(milliseconds(ContinuousClock.now - start)) }
        }
        return median(times)
    }

    private static func noDelay(_ descriptor: Int32) {
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
}
