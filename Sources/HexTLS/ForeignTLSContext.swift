import COpenSSL
import HexNet

/// The TLS settings of hexd's connections with the devices of another protocol (LocalSend): its
/// persona's certificate, TLS 1.2 or 1.3, and the other side's certificate asked for but not
/// required (a LocalSend app older than 1.18 shows none as a client) and not checked against any
/// authority: the caller compares its fingerprint with the one the device announced. No session
/// is kept or resumed, and no early data is taken.
public final class ForeignTLSContext: @unchecked Sendable {
    // Unchecked: an SSL_CTX is safe to share between threads once configured, and these are
    // never changed after `init`.
    let clientContext: OpaquePointer
    let serverContext: OpaquePointer
    public let persona: PersonaIdentity

    public init(persona: PersonaIdentity) throws(TLSError) {
        guard let client = Self.make(persona) else { throw .openSSL("configure the TLS context") }
        guard let server = Self.make(persona) else {
            SSL_CTX_free(client)
            throw .openSSL("configure the TLS context")
        }
        clientContext = client
        serverContext = server
        self.persona = persona
    }

    private static func make(_ persona: PersonaIdentity) -> OpaquePointer? {
        guard let context = SSL_CTX_new(TLS_method()) else { return nil }
        guard hexd_ssl_ctx_allow_tls12(context) == 1,
            SSL_CTX_use_certificate(context, persona.certified.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, persona.certified.key) == 1,
            SSL_CTX_check_private_key(context) == 1,
            SSL_CTX_set_num_tickets(context, 0) == 1,
            SSL_CTX_set_max_early_data(context, 0) == 1
        else {
            SSL_CTX_free(context)
            return nil
        }
        // The same bound as for hexd peers: a device's chain is one certificate of about 1 KiB.
        _ = hexd_ssl_ctx_set_max_cert_list(context, TLSContext.maximumPeerCertificateChain)
        _ = hexd_ssl_ctx_release_buffers(context)
        _ = hexd_ssl_ctx_keep_no_sessions(context)
        // A server that asks for certificates wants a session context, even to refuse a resumption.
        guard SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count)) == 1 else {
            SSL_CTX_free(context)
            return nil
        }
        hexd_ssl_ctx_ask_peer_certificate(context)
        return context
    }

    private static let sessionContext: [UInt8] = Array("hexd-foreign".utf8)

    deinit {
        SSL_CTX_free(clientContext)
        SSL_CTX_free(serverContext)
    }
}

extension TLSConnection {
    /// Runs the handshake with a device of another protocol over `channel`, within `timeout` in all.
    /// The caller checks `peerCertificate` against the fingerprint it expects.
    /// - Throws: `TLSError` when the handshake fails, `SocketError` (a timeout, a closed connection).
    public static func handshake(
        over channel: any ByteChannel, context: ForeignTLSContext, as role: Role, timeout: Duration
    ) async throws -> TLSConnection {
        let engine = try Engine(
            context: role == .client ? context.clientContext : context.serverContext, role: role, sessions: nil,
            peerID: nil)
        return try await handshake(over: channel, engine: engine, timeout: timeout)
    }
}
