import HexKit
import HexNet
import HexTLS

/// Sends one envelope to a peer over a new TCP connection and, when the envelope has a
/// `messageID`, waits for the matching Ack; `Channel` is the connection, for exchanges of
/// several lines (pairing).
enum EnvelopeSender {
    /// What happened to a sent envelope.
    struct Delivery: Sendable {
        /// The Ack's status; nil when no Ack was awaited (no messageID).
        var status: AckStatus?
        var message: String
        var elapsed: Duration
        /// The id the receiver gave the hex, when its Ack says (hexd 2.0 and later).
        var hexID: String? = nil
        /// The key the receiver proved over TLS; nil over plaintext.
        var peerKey: Fingerprint? = nil
    }

    /// How the connection is protected.
    enum Security {
        /// The original app's plain TCP.
        case plaintext
        /// TLS 1.3, the receiver proving the key `expected` (nil takes any key: an address the
        /// user typed, which never announced one).
        case tls(TLSContext, expected: Fingerprint?)
    }

    /// A connection to a peer, secured as asked, that envelopes are written to and replies read from.
    struct Channel {
        let endpoint: Endpoint
        let socket: Socket
        let connection: StreamConnection
        /// The key the peer proved over TLS; nil over plaintext.
        let peerKey: Fingerprint?

        /// Connects and, for TLS, completes the handshake and checks the key.
        /// - Throws: `SendError.refused` when the peer proves another key than `expected`, or
        ///   the socket's and TLS's errors (see `reportingFailures`).
        static func open(to endpoint: Endpoint, security: Security, deadline: ContinuousClock.Instant, maximumLineLength: Int) async throws -> Channel {
            let socket = try await StreamConnector.tcp(to: endpoint, timeout: remaining(until: deadline))
            switch security {
            case .plaintext:
                return Channel(endpoint: endpoint, socket: socket, connection: StreamConnection(stream: socket, maximumLineLength: maximumLineLength), peerKey: nil)
            case .tls(let context, let expected):
                let secured = try await TLSStream.handshake(over: socket, context: context, as: .client, timeout: remaining(until: deadline))
                if let expected, secured.peer != expected {
                    throw SendError.refused("\(endpoint) proved the key \(secured.peer), not \(expected), the key of the peer it claims to be; nothing was sent")
                }
                return Channel(endpoint: endpoint, socket: socket, connection: StreamConnection(stream: secured, maximumLineLength: maximumLineLength), peerKey: secured.peer)
            }
        }

        func write(_ envelope: Envelope, deadline: ContinuousClock.Instant) async throws {
            try await connection.writeLine(envelope.encodedLine(), timeout: remaining(until: deadline))
        }

        /// The peer's answer to the envelope `messageID`: an Alert (a blocked sender), or any
        /// envelope repeating `messageID` (or an Ack without one, which answers the connection).
        /// Lines that are not envelopes, and answers to other envelopes, are skipped.
        /// - Throws: `SendError.undelivered` when the peer closes first.
        func reply(to messageID: String, deadline: ContinuousClock.Instant) async throws -> Envelope {
            while true {
                guard case .line(let bytes)? = try await connection.readLine(timeout: remaining(until: deadline)) else {
                    throw SendError.undelivered("\(endpoint) closed the connection without answering \(messageID)")
                }
                guard let reply = try? Envelope.decode(from: bytes) else { continue }
                if reply.operationType == .alert { throw SendError.refused("\(endpoint) answered: \((reply.message ?? "").clipped(toUTF8: 500))") }
                if reply.messageID == messageID || (reply.operationType == .ack && reply.messageID == nil) { return reply }
            }
        }

        /// Ends the connection's sending side: the peer reads to the end, then closes.
        func finish() {
            socket.shutdownWrite()
        }
    }

    /// An Ack that means the envelope was taken (stored, a duplicate, or an Alert received);
    /// any other status is thrown.
    /// - Throws: `SendError.undelivered` for `failed` (worth retrying), `.refused` for the rest.
    static func taken(_ reply: Envelope, from endpoint: Endpoint) throws(SendError) -> (status: AckStatus, message: String) {
        let status = reply.operationType == .ack ? reply.status ?? "unknown" : AckStatus(rawValue: "unexpected \(reply.operationType.rawValue.clipped(toUTF8: 40))")
        let message = (reply.message ?? status.rawValue).clipped(toUTF8: 500)
        switch status {
        case .stored, .duplicate, .received: return (status, message)
        case .failed: throw .undelivered("\(endpoint) could not store it: \(message)")
        default: throw .refused("\(endpoint) answered \(status): \(message)")
        }
    }

    /// - Parameter awaitReply: false to return once the envelope is written (`--no-wait`), without
    ///   waiting for an Ack or, from a legacy peer, for the end of the connection.
    /// - Throws: `SendError.undelivered` (cannot connect, closed early, no Ack in time, Ack
    ///   `failed`) or `.refused` (another Ack status, or a blocked-sender Alert).
    static func send(
        _ envelope: Envelope, to endpoint: Endpoint, security: Security, timeout: Duration, maximumLineLength: Int, awaitReply: Bool = true
    ) async throws(SendError) -> Delivery {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + timeout
        return try await reportingFailures(to: endpoint, within: timeout) {
            let channel = try await Channel.open(to: endpoint, security: security, deadline: deadline, maximumLineLength: maximumLineLength)
            try await channel.write(envelope, deadline: deadline)
            guard awaitReply else {
                channel.finish()
                return Delivery(status: nil, message: "written; not waiting for an acknowledgement", elapsed: clock.now - start, peerKey: channel.peerKey)
            }
            guard let messageID = envelope.messageID else {
                // A legacy peer answers only a blocked sender, with an Alert; otherwise it closes
                // once it has read everything.
                channel.finish()
                while case .line(let bytes)? = try await channel.connection.readLine(timeout: remaining(until: deadline)) {
                    if let alert = try? Envelope.decode(from: bytes), alert.operationType == .alert {
                        throw SendError.refused("\(endpoint) answered: \((alert.message ?? "").clipped(toUTF8: 500))")
                    }
                }
                return Delivery(status: nil, message: "sent; a legacy peer sends no acknowledgement", elapsed: clock.now - start, peerKey: channel.peerKey)
            }
            let reply = try await channel.reply(to: messageID, deadline: deadline)
            let (status, message) = try taken(reply, from: endpoint)
            // Only an id that is one, so a peer cannot slip other text into a report.
            let hexID = reply.hexID.flatMap(UUID.init(uuidString:))?.uuidString
            return Delivery(status: status, message: message, elapsed: clock.now - start, hexID: hexID, peerKey: channel.peerKey)
        }
    }

    /// Runs an exchange with `endpoint`, reporting every way it can fail as a `SendError`.
    static func reportingFailures<T>(to endpoint: Endpoint, within timeout: Duration, _ exchange: () async throws -> T) async throws(SendError) -> T {
        do {
            return try await exchange()
        } catch let error as SendError {
            throw error
        } catch is CancellationError {
            throw SendError.undelivered("the exchange with \(endpoint) was cancelled")
        } catch let error as SocketError where error.isTimeout {
            throw SendError.undelivered("\(endpoint) did not answer within \(timeout)")
        } catch let error as TLSError {
            throw SendError.undelivered("no TLS with \(endpoint) (a legacy peer takes --legacy): \(error)")
        } catch {
            throw SendError.undelivered("\(error)")
        }
    }

    /// What is left of a deadline, at least a millisecond (a zero timeout would mean "none").
    private static func remaining(until deadline: ContinuousClock.Instant) -> Duration {
        max(deadline - .now, .milliseconds(1))
    }
}
