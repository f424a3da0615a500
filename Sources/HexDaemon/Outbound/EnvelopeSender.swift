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
    ///
    /// Unchecked Sendable: a channel has one owner at a time, the task that opened it or the
    /// `ConnectionPool`, which hands it to a single taker; its line framer is never shared.
    struct Channel: @unchecked Sendable {
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
    /// - Parameter pool: where TLS connections are kept between acknowledged sends; a send that
    ///   waits for an Ack first tries a connection kept there, and keeps its connection after.
    static func send(
        _ envelope: Envelope, to endpoint: Endpoint, security: Security, timeout: Duration, maximumLineLength: Int, awaitReply: Bool = true,
        pool: ConnectionPool? = nil
    ) async throws(SendError) -> Delivery {
        let start = ContinuousClock.now
        let deadline = start + timeout
        return try await reportingFailures(to: endpoint, within: timeout) {
            if awaitReply, let messageID = envelope.messageID {
                let (reply, channel) = try await answer(
                    to: envelope, messageID: messageID, from: endpoint, security: security, deadline: deadline, maximumLineLength: maximumLineLength, pool: pool)
                return try delivery(answering: reply, on: channel, since: start)
            }
            let channel = try await Channel.open(to: endpoint, security: security, deadline: deadline, maximumLineLength: maximumLineLength)
            try await channel.write(envelope, deadline: deadline)
            guard awaitReply else {
                channel.finish()
                return Delivery(status: nil, message: "written; not waiting for an acknowledgement", elapsed: .now - start, peerKey: channel.peerKey)
            }
            // A legacy peer answers only a blocked sender, with an Alert; otherwise it closes once
            // it has read everything.
            channel.finish()
            while case .line(let bytes)? = try await channel.connection.readLine(timeout: remaining(until: deadline)) {
                if let alert = try? Envelope.decode(from: bytes), alert.operationType == .alert {
                    throw SendError.refused("\(endpoint) answered: \((alert.message ?? "").clipped(toUTF8: 500))")
                }
            }
            return Delivery(status: nil, message: "sent; a legacy peer sends no acknowledgement", elapsed: .now - start, peerKey: channel.peerKey)
        }
    }

    /// The answer to an envelope that has a `messageID`, and the connection it came on: a
    /// connection kept in `pool` when one is still open, else a new one, kept after when a pool is given.
    private static func answer(
        to envelope: Envelope, messageID: String, from endpoint: Endpoint, security: Security, deadline: ContinuousClock.Instant,
        maximumLineLength: Int, pool: ConnectionPool?
    ) async throws -> (Envelope, Channel) {
        if let pool, case .tls(_, let expected?) = security, let kept = pool.take(ConnectionPool.Key(endpoint: endpoint, peerKey: expected)) {
            do {
                return (try await exchange(envelope, messageID: messageID, on: kept, deadline: deadline, keepingIn: pool), kept)
            } catch let error where !isStale(error) {
                throw error
            } catch {
                // The peer closed the kept connection as this send began: the envelope goes again
                // on a new one, and its messageID makes sure it is stored at most once.
            }
        }
        let channel = try await Channel.open(to: endpoint, security: security, deadline: deadline, maximumLineLength: maximumLineLength)
        return (try await exchange(envelope, messageID: messageID, on: channel, deadline: deadline, keepingIn: pool), channel)
    }

    /// Writes `envelope` on `channel` and reads the answer; once it came, the connection goes back
    /// to `pool` (an answer leaves nothing half-read), whatever it says.
    private static func exchange(
        _ envelope: Envelope, messageID: String, on channel: Channel, deadline: ContinuousClock.Instant, keepingIn pool: ConnectionPool?
    ) async throws -> Envelope {
        try await channel.write(envelope, deadline: deadline)
        let reply = try await channel.reply(to: messageID, deadline: deadline)
        pool?.keep(channel)
        return reply
    }

    /// What an Ack says about a send, or the error it means.
    private static func delivery(answering reply: Envelope, on channel: Channel, since start: ContinuousClock.Instant) throws(SendError) -> Delivery {
        let (status, message) = try taken(reply, from: channel.endpoint)
        // Only an id that is one, so a peer cannot slip other text into a report.
        let hexID = reply.hexID.flatMap(UUID.init(uuidString:))?.uuidString
        return Delivery(status: status, message: message, elapsed: .now - start, hexID: hexID, peerKey: channel.peerKey)
    }

    /// Whether a failure on a kept connection means only that the peer had closed it: anything but
    /// an answer (an Alert), the deadline, or cancellation.
    private static func isStale(_ error: any Error) -> Bool {
        switch error {
        case SendError.refused, is CancellationError: false
        case let error as SocketError: !error.isTimeout
        default: true
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
