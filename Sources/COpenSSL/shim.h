// The system's OpenSSL (libssl, libcrypto; 3.0 or later), with the macros Swift cannot import
// wrapped as functions.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/// TLS 1.3 only, both ways (SSL_CTX_set_min/max_proto_version are macros).
static inline int hexd_ssl_ctx_require_tls13(SSL_CTX *context) {
    return SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION)
        && SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION);
}

/// Accepts any certificate during the handshake: a peer is trusted by the fingerprint of its key,
/// checked once the handshake is done, not by a certificate authority.
static inline int hexd_accept_any_certificate(int preverified, X509_STORE_CTX *store) {
    (void)preverified;
    (void)store;
    return 1;
}

/// TLS 1.2 or 1.3, for the devices of other protocols (some apps and their libraries are older).
static inline int hexd_ssl_ctx_allow_tls12(SSL_CTX *context) {
    return SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        && SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION);
}

/// Asks the other side for its certificate, and takes any, or none: the caller checks what it got.
static inline void hexd_ssl_ctx_ask_peer_certificate(SSL_CTX *context) {
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, hexd_accept_any_certificate);
}

/// Asks the other side for its certificate (mutual TLS); a side without one fails the handshake.
static inline void hexd_ssl_ctx_require_peer_certificate(SSL_CTX *context) {
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, hexd_accept_any_certificate);
}

/// Tells OpenSSL to call the new-session callback with each ticket a client gets and to keep no
/// sessions in its own cache (SSL_CTX_set_session_cache_mode is a macro).
static inline long hexd_ssl_ctx_keep_client_sessions_outside(SSL_CTX *context) {
    return SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
}

/// Makes a server keep its sessions in its own cache, at most `count`, and give clients only
/// their ids as tickets (stateful tickets, SSL_OP_NO_TICKET in TLS 1.3): a resumption then finds
/// the session, the peer's certificate parsed, instead of decrypting and parsing it again.
static inline long hexd_ssl_ctx_keep_server_sessions(SSL_CTX *context, long count) {
    SSL_CTX_set_options(context, SSL_OP_NO_TICKET);
    SSL_CTX_sess_set_cache_size(context, count);
    return SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_SERVER);
}

/// Makes one server connection give a stateless ticket (the session itself, encrypted with the
/// context's ticket key) and keep nothing in the cache (SSL_OP_NO_TICKET is a compound macro).
static inline void hexd_ssl_give_stateless_ticket(SSL *ssl) {
    SSL_clear_options(ssl, SSL_OP_NO_TICKET);
}

/// The sessions a context keeps in its cache (SSL_CTX_sess_number is a macro).
static inline long hexd_ssl_ctx_kept_sessions(SSL_CTX *context) {
    return SSL_CTX_sess_number(context);
}

/// Keeps no session and gives no ticket, in TLS 1.2 as in 1.3: nothing is resumed (the session
/// cache mode is a macro).
static inline long hexd_ssl_ctx_keep_no_sessions(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_NO_TICKET);
    return SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
}

/// The bytes a memory BIO holds, waiting to be read (BIO_pending is a macro).
static inline size_t hexd_bio_pending(BIO *bio) {
    return BIO_ctrl_pending(bio);
}

/// UTF-8 text for X509_NAME_add_entry_by_txt (MBSTRING_UTF8 is a compound macro).
static const int HEXD_MBSTRING_UTF8 = MBSTRING_UTF8;
static const int HEXD_EVP_PKEY_ED25519 = EVP_PKEY_ED25519;
static const int HEXD_EVP_PKEY_RSA = EVP_PKEY_RSA;
static const int HEXD_EVP_PKEY_EC = EVP_PKEY_EC;

/// A new EC key on the P-256 curve (EVP_EC_gen is a variadic macro), or NULL.
static inline EVP_PKEY *hexd_generate_p256_key(void) {
    return EVP_EC_gen("P-256");
}

/// The largest certificate chain accepted from the other side, in bytes (a macro in OpenSSL).
static inline long hexd_ssl_ctx_set_max_cert_list(SSL_CTX *context, long bytes) {
    return SSL_CTX_set_max_cert_list(context, bytes);
}

/// Frees a connection's read and write buffers while it is idle (a macro in OpenSSL).
static inline long hexd_ssl_ctx_release_buffers(SSL_CTX *context) {
    return SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);
}
