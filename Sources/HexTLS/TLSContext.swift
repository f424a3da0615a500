import COpenSSL

/// The TLS settings every connection of this device shares: TLS 1.3 only, this device's
/// certificate, and a certificate asked of the other side too (mutual TLS). Certificates are not
/// checked against any authority: a peer is trusted by its fingerprint, which the caller checks
/// once the handshake is done (`TLSStream.peer`).
///
/// As a server it gives each client one session ticket per connection, only the id of a session
/// it keeps in memory (at most `serverSessions`: a restart ends every ticket, and a resumption
/// takes the session as it is, the client's certificate parsed, rather than decrypting and
/// parsing a ticket again: 2.0x plaintext instead of 3.4x in `hexbench transfer`); as a client it
/// keeps the tickets it gets, one per peer (`TLSSessions`). No early data (0-RTT) either way: it
/// could be replayed.
public final class TLSContext: @unchecked Sendable {
    // Unchecked: an SSL_CTX is safe to share between threads once configured, and these are
    // never changed after `init`.
    /// One context per role: their session caches work the other way round.
    let clientContext: OpaquePointer
    let serverContext: OpaquePointer
    public let identity: TLSIdentity
    /// The tickets this device got as a client.
    let sessions = TLSSessions(capacity: 256)
    /// The largest certificate chain taken from the other side, in bytes.
    public static let maximumPeerCertificateChain = 16_384
    /// The sessions a server keeps for clients to resume, the oldest dropped first.
    public static let serverSessions = 1_024

    /// The sessions the server keeps now, for known peers to resume (at most `serverSessions`).
    public var keptSessions: Int { hexd_ssl_ctx_kept_sessions(serverContext) }

    public init(identity: TLSIdentity) throws(TLSError) {
        guard let client = try? Self.make(identity) else { throw .openSSL("configure the TLS context") }
        guard let server = try? Self.make(identity) else {
            SSL_CTX_free(client)
            throw .openSSL("configure the TLS context")
        }
        // A client's tickets are kept by `sessions`, not by OpenSSL's cache (which has no bound of
        // ours); a server keeps its sessions, at most `serverSessions`, and gives out their ids.
        _ = hexd_ssl_ctx_keep_client_sessions_outside(client)
        SSL_CTX_sess_set_new_cb(client, TLSConnection.ticketArrived)
        _ = hexd_ssl_ctx_keep_server_sessions(server, Self.serverSessions)
        clientContext = client
        serverContext = server
        self.identity = identity
    }

    /// A context with this device's certificate and the settings both roles share.
    private static func make(_ identity: TLSIdentity) throws(TLSError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_method()) else { throw .openSSL("make a TLS context") }
        guard hexd_ssl_ctx_require_tls13(context) == 1,
            SSL_CTX_use_certificate(context, identity.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, identity.key) == 1,
            SSL_CTX_check_private_key(context) == 1,
            // One ticket a connection: each is used once, and the connection that uses it gets the next.
            SSL_CTX_set_num_tickets(context, 1) == 1,
            SSL_CTX_set_max_early_data(context, 0) == 1,
            // A server that asks for the client's certificate resumes only sessions of its own context.
            SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count)) == 1
        else {
            SSL_CTX_free(context)
            throw .openSSL("configure the TLS context")
        }
        // A peer's chain is one certificate under 1 KiB: a larger one is refused in the handshake
        // rather than held for the connection's life (4,096 connections with 95 KB ones held a
        // gigabyte). Idle connections give their record buffers back.
        _ = hexd_ssl_ctx_set_max_cert_list(context, maximumPeerCertificateChain)
        _ = hexd_ssl_ctx_release_buffers(context)
        hexd_ssl_ctx_require_peer_certificate(context)
        _ = SSL_CTX_set_timeout(context, ticketLifetime)
        return context
    }

    /// How long a session ticket can be used, in seconds: after that, the full handshake again.
    public static let ticketLifetime = 7_200

    private static let sessionContext: [UInt8] = Array("hexd".utf8)

    deinit {
        SSL_CTX_free(clientContext)
        SSL_CTX_free(serverContext)
    }
}
