import COpenSSL
import FoundationEssentials
import HexNet

/// TLS over a connection (a socket, or a test's memory), for any context: OpenSSL works on two
/// memory buffers, and this type moves the bytes between them and the connection, waiting as any
/// of its reads or writes waits (so every wait has the caller's deadline, and no thread blocks).
/// What the other side proved is for the caller to check: `TLSStream` for hexd peers, the carriers
/// of other protocols for theirs.
///
/// Used by one task at a time, like `StreamConnection`, which it serves as its `ByteStream`.
public final class TLSConnection: ByteStream {
    public enum Role: Sendable {
        /// Dials: sends the ClientHello.
        case client
        /// Accepts: answers it.
        case server
    }

    /// The connection the records go over.
    public let channel: any ByteChannel
    /// The SHA-256 of the certificate the other side showed; nil when it showed none (only a
    /// client of a server that does not require one can).
    public let peerCertificate: Fingerprint?
    /// Whether the handshake resumed a session of an earlier connection rather than exchanging
    /// certificates.
    public let isResumed: Bool
    let engine: Engine

    private init(channel: any ByteChannel, engine: Engine, peerCertificate: Fingerprint?) {
        self.channel = channel
        self.engine = engine
        self.peerCertificate = peerCertificate
        isResumed = SSL_session_reused(engine.ssl) == 1
    }

    /// Runs the handshake of `engine` over `channel`, within `timeout` in all.
    /// - Throws: `TLSError` when the handshake fails, `SocketError` (a timeout, a closed connection).
    static func handshake(
        over channel: any ByteChannel, engine: Engine, timeout: Duration
    ) async throws -> TLSConnection {
        let deadline = ContinuousClock.now + timeout
        while true {
            let result = SSL_do_handshake(engine.ssl)
            // What the last step wrote (a client's Finished, a server's session ticket) waits for
            // the first bytes written, or for the first read that has to wait: one segment less
            // each way, and a server's ticket reaches the client with its first answer.
            if result == 1 { break }
            try await engine.flush(to: channel, deadline: deadline)
            switch SSL_get_error(engine.ssl, result) {
            case SSL_ERROR_WANT_READ:
                guard try await engine.fill(from: channel, deadline: deadline) else {
                    throw TLSError("complete the TLS handshake", reason: "the other side closed the connection")
                }
            case SSL_ERROR_WANT_WRITE:
                continue
            default:
                throw TLSError.openSSL("complete the TLS handshake")
            }
        }
        var peerCertificate: Fingerprint?
        if let certificate = SSL_get1_peer_certificate(engine.ssl) {
            defer { X509_free(certificate) }
            guard let der = CertifiedKey.der(of: certificate), let fingerprint = Fingerprint(certificateDER: der)
            else {
                throw TLSError.openSSL("read the other side's certificate")
            }
            peerCertificate = fingerprint
        }
        return TLSConnection(channel: channel, engine: engine, peerCertificate: peerCertificate)
    }

    /// The certificate the other side showed, for a reading of its own (the caller frees it).
    func copyPeerCertificate() -> OpaquePointer? {
        SSL_get1_peer_certificate(engine.ssl)
    }

    /// The common name of the certificate the other side showed (KDE Connect's device ID); nil
    /// when it showed none, or its name has no common name that reads as UTF-8.
    public var peerCommonName: String? {
        guard let certificate = copyPeerCertificate() else { return nil }
        defer { X509_free(certificate) }
        return CertificateFields.commonName(of: certificate)
    }

    /// The public key of the certificate the other side showed, as DER (SubjectPublicKeyInfo).
    public var peerPublicKeyDER: [UInt8]? {
        guard let certificate = copyPeerCertificate() else { return nil }
        defer { X509_free(certificate) }
        return CertificateFields.publicKeyDER(of: certificate)
    }

    /// Reads what is available: every record OpenSSL has whole, up to `maximumCount` bytes (at
    /// most `Engine.batch` at a time); waits while there is none.
    public func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void) async throws
        -> Int
    {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let capacity = max(1, min(maximumCount, Engine.batch))
        while true {
            var failure: Int32 = 0
            let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer -> Int in
                // A record at a time is 16 KiB: the records already received are taken together.
                var filled = 0
                while filled < buffer.count {
                    var count = 0
                    let result = SSL_read_ex(
                        engine.ssl, buffer.baseAddress.map { $0 + filled }, buffer.count - filled,
                        &count)
                    guard result == 1 else {
                        failure = SSL_get_error(engine.ssl, result)
                        break
                    }
                    filled += count
                }
                if filled > 0 { take(UnsafeBufferPointer(rebasing: buffer[..<filled])) }
                return filled
            }
            if count > 0 { return count }
            switch failure {
            case SSL_ERROR_ZERO_RETURN:
                return 0
            case SSL_ERROR_WANT_READ:
                try await engine.flush(to: channel, deadline: deadline)
                // A stream that ends without TLS's close_notify ends all the same: a line cut
                // short is never taken as a line.
                guard try await engine.fill(from: channel, deadline: deadline) else { return 0 }
            case SSL_ERROR_WANT_WRITE:
                try await engine.flush(to: channel, deadline: deadline)
            default:
                throw TLSError.openSSL("read over TLS")
            }
        }
    }

    /// Sends what the handshake's last step wrote and waits to go with the first bytes written
    /// (a client's Finished): for a protocol whose client may have nothing to write or read at
    /// first, while the server waits for the handshake's end (KDE Connect's protocol 7).
    public func flush(timeout: Duration) async throws {
        try await engine.flush(to: channel, deadline: .now + timeout)
    }

    public func write(_ bytes: [UInt8], timeout: Duration?) async throws {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var offset = 0
        while offset < bytes.count {
            var written = 0
            // A batch of records at a time at most, so the encrypted bytes waiting in memory stay small.
            let end = min(bytes.count, offset + Engine.batch)
            let result = bytes[offset..<end].withUnsafeBytes {
                SSL_write_ex(engine.ssl, $0.baseAddress, $0.count, &written)
            }
            if result == 1 {
                offset += written
                try await engine.flush(to: channel, deadline: deadline)
                continue
            }
            switch SSL_get_error(engine.ssl, result) {
            case SSL_ERROR_WANT_WRITE:
                try await engine.flush(to: channel, deadline: deadline)
            case SSL_ERROR_WANT_READ:
                try await engine.flush(to: channel, deadline: deadline)
                guard try await engine.fill(from: channel, deadline: deadline) else {
                    throw TLSError("write over TLS", reason: "the other side closed the connection")
                }
            default:
                throw TLSError.openSSL("write over TLS")
            }
        }
    }

    /// OpenSSL's new-session callback: a ticket arrived on a client connection (after its
    /// handshake, with the first records read). Always returns 0: OpenSSL keeps its reference
    /// (what is kept is a copy, see `TLSSessions.keep`).
    static let ticketArrived: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let engine = SSL_get_ex_data(ssl, 0) else { return 0 }
        // The engine owns the SSL object, so it outlives every call made on it.
        Unmanaged<Engine>.fromOpaque(engine).takeUnretainedValue().keep(session)
        return 0
    }

    /// One SSL object and the two memory buffers it reads from and writes to.
    final class Engine {
        /// Plaintext moved at a time: four TLS records, so that a large write or read costs a
        /// system call per 64 KiB, not per record; its buffers stay below malloc's mmap threshold
        /// (`hexd_return_large_allocations`), so they do not cost a mapping each.
        static let batch = 65_536
        /// What a batch takes on the wire: its records' headers and tags besides.
        static let wireBatch = batch + 1_024

        let ssl: OpaquePointer
        /// What arrived from the connection, for OpenSSL to read.
        private let incoming: OpaquePointer
        /// What OpenSSL wrote, for the connection.
        private let outgoing: OpaquePointer
        /// Where a client's tickets are kept, and the peer they are kept for.
        private let sessions: TLSSessions?
        private let peerID: UUID?

        /// - Parameters:
        ///   - context: the SSL_CTX of the connection's role.
        ///   - sessions: where a client's tickets are kept, with `peerID` the peer they are kept for;
        ///     nil keeps none.
        init(context: OpaquePointer, role: Role, sessions: TLSSessions?, peerID: UUID?) throws(TLSError) {
            guard let ssl = SSL_new(context) else { throw .openSSL("start a TLS connection") }
            guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
                SSL_free(ssl)
                throw .openSSL("start a TLS connection")
            }
            // The SSL object owns both buffers from here on.
            SSL_set_bio(ssl, incoming, outgoing)
            switch role {
            case .client: SSL_set_connect_state(ssl)
            case .server: SSL_set_accept_state(ssl)
            }
            self.ssl = ssl
            self.incoming = incoming
            self.outgoing = outgoing
            self.sessions = sessions
            self.peerID = peerID
            if let sessions, let peerID {
                sessions.resume(ssl, peerID: peerID)
                SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
            }
        }

        deinit {
            // Whatever ended the connection, its session stays in a server's cache for the
            // client to resume: OpenSSL drops the session of a connection freed without a
            // close_notify (a TLS 1.2 rule against truncation, which TLS 1.3 sessions do not need).
            SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN)
            SSL_free(ssl)
        }

        /// As a server, keeps nothing of this session: the client's ticket carries the session
        /// itself, encrypted with the context's ticket key (a stateless ticket), rather than an id
        /// to look up in the server's cache.
        func keepNoSession() {
            hexd_ssl_give_stateless_ticket(ssl)
        }

        /// Keeps a ticket that arrived on this connection for its peer.
        func keep(_ session: OpaquePointer) {
            guard let sessions, let peerID else { return }
            sessions.keep(session, peerID: peerID)
        }

        /// Writes everything OpenSSL has produced to the connection.
        func flush(to channel: any ByteChannel, deadline: ContinuousClock.Instant?) async throws {
            while hexd_bio_pending(outgoing) > 0 {
                var bytes = [UInt8](repeating: 0, count: min(hexd_bio_pending(outgoing), Self.wireBatch))
                let count = BIO_read(outgoing, &bytes, Int32(bytes.count))
                guard count > 0 else { return }
                try await channel.write(Array(bytes.prefix(Int(count))), timeout: try remaining(until: deadline))
            }
        }

        /// Reads what the connection has (waiting for it) into OpenSSL's buffer; false at the end
        /// of the stream.
        func fill(from channel: any ByteChannel, deadline: ContinuousClock.Instant?) async throws -> Bool {
            let timeout = try remaining(until: deadline)
            let count = try await channel.read(maximumCount: Self.wireBatch, timeout: timeout) { bytes in
                _ = BIO_write(incoming, bytes.baseAddress, Int32(bytes.count))
            }
            return count > 0
        }

        private func remaining(until deadline: ContinuousClock.Instant?) throws -> Duration? {
            guard let deadline else { return nil }
            let left = deadline - .now
            guard left > .zero else { throw SocketError.timedOut("exchange TLS records") }
            return left
        }
    }
}
