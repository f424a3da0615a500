import COpenSSL
import FoundationEssentials
import Glibc
import Synchronization

/// The session tickets this device got as a client, kept to resume its next connection to the same
/// peer (TLS 1.3 resumption, RFC 8446 section 2.2): the handshake then proves both sides again
/// through the session's secret and makes new keys (with a fresh key exchange, for forward
/// secrecy), without the certificates and their signatures.
///
/// A ticket is kept under the device ID that the key of the connection it came from derives, and
/// only ever offered to a connection expecting that ID: a resumed connection proves the same key
/// as the full handshake did. Each ticket is used once (RFC 8446 appendix C.4: a ticket used twice
/// links the two connections for anyone watching); the connection that uses it gets the next.
/// At most `capacity` are kept, the oldest making room.
final class TLSSessions: Sendable {
    /// A ticket: a copy of an `SSL_SESSION`, owned here.
    private final class Ticket: @unchecked Sendable {
        // Unchecked: the copy is only read once made, and is freed once, here.
        let session: OpaquePointer
        let order: UInt64

        init(session: OpaquePointer, order: UInt64) {
            self.session = session
            self.order = order
        }

        deinit { SSL_SESSION_free(session) }

        /// Whether the ticket's lifetime (as the server gave it) is not over yet.
        var isCurrent: Bool {
            SSL_SESSION_get_time(session) + SSL_SESSION_get_timeout(session) > time(nil)
        }
    }

    private struct State {
        var tickets: [UUID: Ticket] = [:]
        var nextOrder: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Sets `ssl` to resume the session kept for `peerID`, if one is kept and current, and forgets
    /// it (each ticket is offered once).
    func resume(_ ssl: OpaquePointer, peerID: UUID) {
        guard let ticket = state.withLock({ $0.tickets.removeValue(forKey: peerID) }), ticket.isCurrent else { return }
        // SSL_set_session takes a reference of its own: the ticket's is dropped with it.
        _ = SSL_set_session(ssl, ticket.session)
    }

    /// Keeps a copy of `session`, a ticket that arrived on a connection expecting `peerID`, if it
    /// can be resumed and its certificate's key derives that ID.
    ///
    /// A copy: OpenSSL marks the session of a connection freed without a TLS close_notify as not
    /// to be resumed (a rule of TLS 1.2, where a connection cut short could leave a session in
    /// doubt), and a peer connection often ends with its TCP stream. A TLS 1.3 ticket arrives
    /// only after both sides have finished the handshake, and stays as good as it was.
    func keep(_ session: OpaquePointer, peerID: UUID) {
        guard SSL_SESSION_is_resumable(session) == 1, let certificate = SSL_SESSION_get0_peer(session),
            DeviceKey.of(certificate: certificate)?.deviceID == peerID, let copy = SSL_SESSION_dup(session)
        else { return }
        state.withLock { state in
            state.tickets[peerID] = Ticket(session: copy, order: state.nextOrder)
            state.nextOrder += 1
            if state.tickets.count > capacity, let oldest = state.tickets.min(by: { $0.value.order < $1.value.order }) {
                state.tickets[oldest.key] = nil
            }
        }
    }

    /// How many tickets are kept.
    var count: Int { state.withLock { $0.tickets.count } }
}
