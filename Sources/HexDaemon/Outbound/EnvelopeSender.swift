import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS

/// Sends one envelope to a peer over a new TCP connection and, when the envelope has a
/// `messageID`, waits for the matching Ack; `Channel` is the connection, for exchanges of
/// several lines (pairing).
enum EnvelopeSender {
    /// How the connection is protected.
    enum Security {
        /// The original app's plain TCP.
        case plaintext
        /// TLS 1.3, the receiver proving the certificate `expected` (nil takes any: an address
        /// the user typed, which never announced one) and a key that derives `deviceID` (nil
        /// takes any: such an address, or a legacy pin from before IDs were derived).
        case tls(TLSContext, expected: Fingerprint?, deviceID: UUID? = nil)
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

        /// Connects to the first of `endpoints` that answers and, for TLS, proves the key asked
        /// for, before anything is written. The candidates are raced as RFC 8305 does: each one
        /// starts when the one before it has failed or has had `ConnectionRace.delay` to answer, the first to
        /// succeed is kept and the others are closed. A candidate that cannot be reached, or proves
        /// another key, costs a dial.
        /// - Throws: the error of the candidate that failed last, which names the others' when it
        ///   is a `SendError`; `CancellationError` when the send was cancelled.
        static func open(
            to endpoints: [Endpoint], security: Security, deadline: ContinuousClock.Instant, maximumLineLength: Int
        ) async throws -> Channel {
            guard let first = endpoints.first else { throw SendError.undelivered("no address to send to") }
            guard endpoints.count > 1 else {
                return try await open(
                    to: first, security: security, deadline: deadline,
                    maximumLineLength: maximumLineLength)
            }
            var race = ConnectionRace<Channel>(candidates: endpoints.count)
            return try await withThrowingTaskGroup(of: ConnectionRace<Channel>.Event.self) { group in
                func start(_ index: Int) {
                    group.addTask {
                        do {
                            return .opened(
                                try await open(
                                    to: endpoints[index], security: security,
                                    deadline: deadline, maximumLineLength: maximumLineLength))
                        } catch {
                            return .failed(index, "\(endpoints[index]): \(error)", error)
                        }
                    }
                    if index + 1 < endpoints.count {
                        group.addTask {
                            try? await Task.sleep(for: ConnectionRace<Channel>.delay)
                            return .delayOver(index)
                        }
                    }
                }
                start(0)
                while let event = try await group.next() {
                    switch race.take(event, pastDeadline: ContinuousClock.now >= deadline) {
                    case .start(let index):
                        start(index)
                    case .wait:
                        continue
                    case .won(let channel):
                        // The others are closed as their tasks end (a socket closes when released).
                        group.cancelAll()
                        return channel
                    case .lost:
                        group.cancelAll()
                        throw race.failure
                    }
                }
                throw race.failure
            }
        }

        /// Connects to `endpoint` and, for TLS, completes the handshake and checks the key.
        private static func open(
            to endpoint: Endpoint, security: Security, deadline: ContinuousClock.Instant, maximumLineLength: Int
        ) async throws -> Channel {
            // What the outbox sends is the user's own work: it may go where strangers cannot.
            let socket = try await StreamConnector.tcp(
                to: endpoint, timeout: remaining(until: deadline), keeping: DescriptorHeadroom.keptByOwnWork)
            switch security {
            case .plaintext:
                let connection = StreamConnection(stream: socket, maximumLineLength: maximumLineLength)
                return Channel(endpoint: endpoint, socket: socket, connection: connection, peerKey: nil)
            case .tls(let context, let expected, let deviceID):
                let secured = try await TLSStream.handshake(
                    over: socket, context: context, as: .client,
                    expecting: deviceID, timeout: remaining(until: deadline))
                let provenID = secured.peerKey.deviceID
                // A wrong key at an address a beacon gave may be a replay's source: worth the next
                // candidate, and a later attempt, never the end of a queued send.
                if let deviceID, provenID != deviceID {
                    throw SendError.undelivered(
                        "\(endpoint) proved a key whose ID is \(provenID.uppercaseText), "
                            + "not \(deviceID.uppercaseText), the peer it was announced as; "
                            + "nothing was sent")
                }
                if let expected, secured.peer != expected {
                    throw SendError.undelivered(
                        "\(endpoint) proved the key \(secured.peer), not \(expected), "
                            + "the key of the peer it claims to be; nothing was sent")
                }
                let connection = StreamConnection(stream: secured, maximumLineLength: maximumLineLength)
                return Channel(endpoint: endpoint, socket: socket, connection: connection, peerKey: secured.peer)
            }
        }

        func write(_ envelope: Envelope, deadline: ContinuousClock.Instant) async throws {
            try await write(line: envelope.encodedLine(), deadline: deadline)
        }

        func write(line: [UInt8], deadline: ContinuousClock.Instant) async throws {
            try await connection.writeLine(line, timeout: remaining(until: deadline))
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
                if reply.operationType == .alert {
                    throw SendError.refused("\(endpoint) answered: \((reply.message ?? "").clipped(toUTF8: 500))")
                }
                if reply.messageID == messageID || (reply.operationType == .ack && reply.messageID == nil) {
                    return reply
                }
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
    static func taken(_ reply: Envelope, from endpoint: Endpoint) throws(SendError) -> (
        status: AckStatus, message: String
    ) {
        let status =
            reply.operationType == .ack
            ? reply.status ?? "unknown"
            : AckStatus(rawValue: "unexpected \(reply.operationType.rawValue.clipped(toUTF8: 40))")
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
    /// - Parameter endpoints: where the receiver may be, in the order to try (see `Channel.open`).
    /// - Parameter encoded: `envelope` as encoded already (by the outbox, which keeps it), so that
    ///   it is not encoded twice.
    static func send(
        _ envelope: Envelope, encoded: [UInt8]? = nil, to endpoints: [Endpoint], security: Security,
        timeout: Duration, maximumLineLength: Int, awaitReply: Bool = true, pool: ConnectionPool? = nil
    ) async throws(SendError) -> EnvelopeDelivery {
        let start = ContinuousClock.now
        let line = encoded ?? envelope.encodedLine()
        let allowed = timeout + EnvelopeLimits.ackAllowance(forBytes: line.count)
        let deadline = start + allowed
        let label = endpoints.first?.description ?? "nowhere"
        return try await reportingFailures(to: label, within: allowed) {
            if awaitReply, let messageID = envelope.messageID {
                let (reply, channel) = try await answer(
                    to: line, messageID: messageID, from: endpoints, security: security, deadline: deadline,
                    maximumLineLength: maximumLineLength, pool: pool)
                return try delivery(answering: reply, on: channel, since: start)
            }
            let channel = try await Channel.open(
                to: endpoints, security: security, deadline: deadline,
                maximumLineLength: maximumLineLength)
            try await channel.write(line: line, deadline: deadline)
            guard awaitReply else {
                channel.finish()
                return EnvelopeDelivery(
                    status: nil, message: "written; not waiting for an acknowledgement",
                    elapsed: .now - start, peerKey: channel.peerKey, endpoint: channel.endpoint)
            }
            // A legacy peer answers only a blocked sender, with an Alert; otherwise it closes once
            // it has read everything.
            channel.finish()
            while case .line(let bytes)? = try await channel.connection.readLine(timeout: remaining(until: deadline)) {
                if let alert = try? Envelope.decode(from: bytes), alert.operationType == .alert {
                    let said = (alert.message ?? "").clipped(toUTF8: 500)
                    throw SendError.refused("\(channel.endpoint) answered: \(said)")
                }
            }
            return EnvelopeDelivery(
                status: nil, message: "sent; a legacy peer sends no acknowledgement", elapsed: .now - start,
                peerKey: channel.peerKey, endpoint: channel.endpoint)
        }
    }

    /// The answer to an envelope that has a `messageID`, and the connection it came on: a
    /// connection kept in `pool` when one is still open, else a new one, kept after when a pool is given.
    private static func answer(
        to line: [UInt8], messageID: String, from endpoints: [Endpoint], security: Security,
        deadline: ContinuousClock.Instant, maximumLineLength: Int, pool: ConnectionPool?
    ) async throws -> (Envelope, Channel) {
        if let pool, case .tls(_, let expected?, _) = security, let endpoint = endpoints.first,
            let kept = pool.take(ConnectionPool.Key(endpoint: endpoint, peerKey: expected))
        {
            do {
                return (
                    try await exchange(line, messageID: messageID, on: kept, deadline: deadline, keepingIn: pool),
                    kept
                )
            } catch let error where !isStale(error) {
                throw error
            } catch {
                // The peer closed the kept connection as this send began: the envelope goes again
                // on a new one, and its messageID makes sure it is stored at most once.
            }
        }
        let channel = try await Channel.open(
            to: endpoints, security: security, deadline: deadline,
            maximumLineLength: maximumLineLength)
        return (
            try await exchange(line, messageID: messageID, on: channel, deadline: deadline, keepingIn: pool),
            channel
        )
    }

    /// Writes the envelope `line` on `channel` and reads the answer; once it came, the connection
    /// goes back to `pool` (an answer leaves nothing half-read), whatever it says.
    private static func exchange(
        _ line: [UInt8], messageID: String, on channel: Channel, deadline: ContinuousClock.Instant,
        keepingIn pool: ConnectionPool?
    ) async throws -> Envelope {
        try await channel.write(line: line, deadline: deadline)
        let reply = try await channel.reply(to: messageID, deadline: deadline)
        pool?.keep(channel)
        return reply
    }

    /// What an Ack says about a send, or the error it means.
    private static func delivery(answering reply: Envelope, on channel: Channel, since start: ContinuousClock.Instant)
        throws(SendError) -> EnvelopeDelivery
    {
        let (status, message) = try taken(reply, from: channel.endpoint)
        // Only an id that is one, so a peer cannot slip other text into a report.
        let hexID = reply.hexID.flatMap(UUID.init(uuidString:))?.uuidString
        return EnvelopeDelivery(
            status: status, message: message, elapsed: .now - start, hexID: hexID, peerKey: channel.peerKey,
            endpoint: channel.endpoint)
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

    /// Runs an exchange with `endpoint` (as the user reads it), reporting every way it can fail as
    /// a `SendError`.
    static func reportingFailures<T>(
        to endpoint: String, within timeout: Duration, _ exchange: () async throws -> T
    ) async throws(SendError) -> T {
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
