import COpenSSL

/// The TLS settings every connection of this device shares: TLS 1.3 only, this device's
/// certificate, and a certificate asked of the other side too (mutual TLS). Certificates are not
/// checked against any authority: a peer is trusted by its fingerprint, which the caller checks
/// once the handshake is done (`TLSStream.peer`).
public final class TLSContext: @unchecked Sendable {
    // Unchecked: an SSL_CTX is safe to share between threads once configured, and this one is
    // never changed after `init`.
    let context: OpaquePointer
    public let identity: TLSIdentity
    /// The largest certificate chain taken from the other side, in bytes.
    public static let maximumPeerCertificateChain = 16_384

    public init(identity: TLSIdentity) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_method()) else { throw .openSSL("make a TLS context") }
        guard hexd_ssl_ctx_require_tls13(context) == 1,
              SSL_CTX_use_certificate(context, identity.certificate) == 1,
              SSL_CTX_use_PrivateKey(context, identity.key) == 1,
              SSL_CTX_check_private_key(context) == 1,
              // No session tickets: nothing resumes sessions yet, and each ticket costs the server work.
              SSL_CTX_set_num_tickets(context, 0) == 1
        else {
            SSL_CTX_free(context)
            throw .openSSL("configure the TLS context")
        }
        // A peer's chain is one certificate under 1 KiB: a larger one is refused in the handshake
        // rather than held for the connection's life (4,096 connections with 95 KB ones held a
        // gigabyte). Idle connections give their record buffers back.
        _ = hexd_ssl_ctx_set_max_cert_list(context, Self.maximumPeerCertificateChain)
        _ = hexd_ssl_ctx_release_buffers(context)
        hexd_ssl_ctx_require_peer_certificate(context)
        self.context = context
        self.identity = identity
    }

    deinit { SSL_CTX_free(context) }
}
