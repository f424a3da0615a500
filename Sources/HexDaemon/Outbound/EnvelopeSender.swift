import HexKit
import HexNet
import HexTLS

/// Sends one envelope to a peer over a new TCP connection and, when the envelope has a
/// `messageID`, waits for the matching Ack.
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
        func remaining() -> Duration { max(deadline - clock.now, .milliseconds(1)) }
        do {
            let socket = try await StreamConnector.tcp(to: endpoint, timeout: remaining())
            var peerKey: Fingerprint?
            let stream: any ByteStream
            switch security {
            case .plaintext:
                stream = socket
            case .tls(let context, let expected):
                let secured = try await TLSStream.handshake(over: socket, context: context, as: .client, timeout: remaining())
                if let expected, secured.peer != expected {
                    throw SendError.refused("\(endpoint) proved the key \(secured.peer), not \(expected), the key of the peer it claims to be; nothing was sent")
                }
                peerKey = secured.peer
                stream = secured
            }
            let connection = StreamConnection(stream: stream, maximumLineLength: maximumLineLength)
            try await connection.writeLine(envelope.encodedLine(), timeout: remaining())
            guard awaitReply else {
                socket.shutdownWrite()
                return Delivery(status: nil, message: "written; not waiting for an acknowledgement", elapsed: clock.now - start, peerKey: peerKey)
            }
            guard let messageID = envelope.messageID else {
                // A legacy peer answers only a blocked sender, with an Alert; otherwise it closes
                // once it has read everything.
                socket.shutdownWrite()
                while case .line(let bytes)? = try await connection.readLine(timeout: remaining()) {
                    if let alert = try? Envelope.decode(from: bytes), alert.operationType == .alert {
                        throw SendError.refused("\(endpoint) answered: \((alert.message ?? "").clipped(toUTF8: 500))")
                    }
                }
                return Delivery(status: nil, message: "sent; a legacy peer sends no acknowledgement", elapsed: clock.now - start, peerKey: peerKey)
            }
            while true {
                guard case .line(let bytes)? = try await connection.readLine(timeout: remaining()) else {
                    throw SendError.undelivered("\(endpoint) closed the connection without acknowledging \(messageID)")
                }
                guard let reply = try? Envelope.decode(from: bytes) else { continue }
                if reply.operationType == .alert {
                    throw SendError.refused("\(endpoint) answered: \((reply.message ?? "").clipped(toUTF8: 500))")
                }
                guard reply.operationType == .ack, reply.messageID == messageID || reply.messageID == nil else { continue }
                let status = reply.status ?? "unknown"
                let message = (reply.message ?? status.rawValue).clipped(toUTF8: 500)
                switch status {
                case .stored, .duplicate, .received:
                    // Only an id that is one, so a peer cannot slip other text into a report.
                    let hexID = reply.hexID.flatMap(UUID.init(uuidString:))?.uuidString
                    return Delivery(status: status, message: message, elapsed: clock.now - start, hexID: hexID, peerKey: peerKey)
                case .failed:
                    throw SendError.undelivered("\(endpoint) could not store it: \(message)")
                default:
                    throw SendError.refused("\(endpoint) answered \(status): \(message)")
                }
            }
        } catch let error as SendError {
            throw error
        } catch is CancellationError {
            throw SendError.undelivered("the send to \(endpoint) was cancelled")
        } catch let error as SocketError where error.isTimeout {
            throw SendError.undelivered("\(endpoint) did not answer within \(timeout)")
        } catch let error as TLSError {
            throw SendError.undelivered("no TLS with \(endpoint) (a legacy peer takes --legacy): \(error)")
        } catch {
            throw SendError.undelivered("\(error)")
        }
    }
}
