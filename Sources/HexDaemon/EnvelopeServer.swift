import HexControl
import HexKit
import HexNet
import Synchronization

/// Accepts TCP connections from peers and acts on the envelopes they send, one per line, each
/// connection in its own task so a slow or hostile peer never delays the others.
final class EnvelopeServer: Sendable {
    /// Connections served at once; more are closed at once.
    static let maximumConnections = 512

    let listener: StreamListener
    let service: HexService
    let events: EventLog
    let configuration: DaemonConfiguration
    let logger: Logger
    private let openConnections = Mutex(0)

    init(listener: StreamListener, service: HexService, events: EventLog, configuration: DaemonConfiguration, logger: Logger) {
        self.listener = listener
        self.service = service
        self.events = events
        self.configuration = configuration
        self.logger = logger
    }

    /// Accepts until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let socket: Socket
                do {
                    socket = try await listener.accept()
                } catch is CancellationError {
                    return
                } catch {
                    logger.error("\(error)")
                    return
                }
                let admitted = openConnections.withLock { count in
                    guard count < Self.maximumConnections else { return false }
                    count += 1
                    return true
                }
                guard admitted else {
                    logger.warning("refused a connection from \(socket.remoteEndpoint?.description ?? "?"): \(Self.maximumConnections) already open")
                    continue
                }
                group.addTask {
                    await self.serve(socket)
                    self.openConnections.withLock { $0 -= 1 }
                }
            }
        }
    }

    private func serve(_ socket: Socket) async {
        let remote = socket.remoteEndpoint?.description ?? "?"
        let connection = StreamConnection(socket: socket, maximumLineLength: configuration.maximumLineLength)
        logger.debug("connection from \(remote)")
        while true {
            let item: LineFramer.Item?
            do {
                item = try await connection.readLine(idleTimeout: configuration.idleTimeout)
            } catch {
                logger.debug("connection from \(remote) ended: \(error)")
                return
            }
            switch item {
            case nil:
                return
            case .lineTooLong:
                logger.warning("\(remote) sent a line over \(configuration.maximumLineLength) bytes; closing the connection")
                if !configuration.legacy {
                    let ack = DataSendWrapper.ack(.invalid, messageID: nil, message: "line longer than \(configuration.maximumLineLength) bytes; closing the connection",
                                                  versionID: configuration.appVersion)
                    try? await connection.writeLine(ack.encodedLine(), timeout: .seconds(5))
                }
                // Closing with the rest of the line unread would reset the connection and could
                // destroy the Ack before the peer reads it: half-close, drain until the peer stops
                // (the framer discards everything now), then close.
                socket.shutdownWrite()
                _ = try? await connection.readLine(idleTimeout: .seconds(1))
                return
            case .line(let bytes):
                guard let reply = await handle(bytes, from: remote) else { continue }
                do {
                    try await connection.writeLine(reply.encodedLine(), timeout: .seconds(10))
                } catch {
                    logger.debug("cannot reply to \(remote): \(error)")
                    return
                }
            }
        }
    }

    /// Acts on one line and returns the reply owed, if any.
    private func handle(_ bytes: [UInt8], from remote: String) async -> DataSendWrapper? {
        var envelope: DataSendWrapper
        do {
            envelope = try DataSendWrapper.decode(from: bytes)
        } catch {
            logger.info("\(remote) sent a line that is not an envelope: \(error)")
            // The original app answered nothing; a legacy-playing daemon does the same.
            return configuration.legacy ? nil : await service.reply(toUnreadable: error)
        }
        // A legacy peer knows nothing of messageIDs: no Ack, no duplicate detection.
        if configuration.legacy { envelope.messageID = nil }
        do {
            let (outcome, reply) = try await service.receive(envelope)
            await record(outcome, of: envelope, from: remote)
            return reply
        } catch {
            logger.error("cannot store what \(remote) sent: \(error)")
            guard let messageID = envelope.messageID else { return nil }
            return .ack(.failed, messageID: messageID, message: "the receiver could not store it: \(error)", versionID: configuration.appVersion)
        }
    }

    private func record(_ outcome: ReceiveOutcome, of envelope: DataSendWrapper, from remote: String) async {
        let sender = envelope.hex?.senderName.flatMap { $0.isEmpty ? nil : $0 } ?? remote
        switch outcome {
        case .stored(let hex):
            logger.info("stored hex \(hex.id.uuidString.uppercased()) \"\(hex.hexDescription)\" from \(sender) (version \(envelope.versionID), \(hex.links.count) links)")
            await events.publish(.hexReceived, peerUUID: hex.senderUUID, peer: sender, versionID: envelope.versionID,
                                 id: hex.id.uuidString.uppercased(), message: hex.hexDescription)
        case .alert(let message):
            logger.info("alert from \(remote) (version \(envelope.versionID)): \(message)")
            await events.publish(.alertReceived, peer: remote, versionID: envelope.versionID, message: message)
        default:
            logger.info("\(outcome.ackStatus) from \(sender) (version \(envelope.versionID)): \(outcome.explanation)")
        }
    }
}
