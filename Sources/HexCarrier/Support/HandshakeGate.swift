import HexEngine
import HexNet
import Synchronization

/// The daemon's one `HandshakeAdmission`, asked by every TLS listener (hexd's envelopes and
/// files, LocalSend's API) for each connection it accepts, before any cryptography: a connection
/// refused is reset at once, and costs an accept and a close. Told by the daemon where known peers
/// were last seen (a connection their paired key proved, a delivery to them over TLS).
package final class HandshakeGate: Sendable {
    /// What the gate decided since the daemon started, for `status`: connections let through
    /// from known peers' addresses, and strangers' refused.
    package struct Counts: Sendable, Equatable {
        package var known = 0
        package var refused = 0
    }

    private let admission: Mutex<HandshakeAdmission<IPAddress>>
    private let tally = Mutex(Counts())
    private let logger: Logger

    package init(budgets: HandshakeAdmission<IPAddress>.Budgets, logger: Logger) {
        admission = Mutex(HandshakeAdmission(budgets: budgets) { $0.prefix })
        self.logger = logger
    }

    package var counts: Counts { tally.withLock { $0 } }

    /// Who a connection let through is from.
    package enum Admitted: Sendable, Equatable {
        /// An address a known peer was last seen at.
        case knownPeer
        /// Anyone else.
        case stranger
    }

    /// Whether `socket`, just accepted on `listener` (named for the log), gets its handshake, and
    /// as whose; nil when it does not. One refused is made to reset when it is closed: the caller
    /// drops it.
    package func admit(_ socket: Socket, on listener: String) -> Admitted? {
        // A connection that is gone already (no peer name) is no one's: the handshake fails at once.
        guard let address = socket.remoteAddress else { return .stranger }
        let decision = admission.withLock { $0.decide(address, at: .now) }
        tally.withLock { counts in
            switch decision {
            case .known: counts.known += 1
            case .stranger: break
            case .refused: counts.refused += 1
            }
        }
        switch decision {
        case .known: return .knownPeer
        case .stranger: return .stranger
        case .refused(let budget, let newOffence):
            refuse(socket, from: address, on: listener, past: budget, newOffence: newOffence)
            return nil
        }
    }

    private func refuse(
        _ socket: Socket, from address: IPAddress, on listener: String,
        past budget: HandshakeAdmission<IPAddress>.Refusal,
        newOffence: Bool
    ) {
        socket.resetOnClose()
        if newOffence {
            logger.limited(
                "handshake budget", .warning,
                "\(listener): closing connections from \(address) before their TLS handshake: it is past its "
                    + "budget of handshakes (--stranger-handshakes)")
        } else if budget != .address {
            logger.limited(
                "handshake budget all", .warning,
                "\(listener): closing strangers' connections (from \(address) and others) before their TLS "
                    + "handshake: they are past \(budget == .total ? "all strangers'" : "their subnet's") budget of "
                    + "handshakes (--stranger-handshakes)")
        }
    }

    /// A known peer (its paired key proved, or hexd delivered to it over TLS) was just at `address`.
    package func markKnown(_ address: IPAddress) {
        admission.withLock { $0.markKnown(address, at: .now) }
    }
}
