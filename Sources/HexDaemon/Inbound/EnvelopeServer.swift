import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import Synchronization

/// Accepts TCP connections from peers and acts on the envelopes they send, one per line, each
/// connection in its own task so a slow or hostile peer never delays the others.
///
/// Every connection lives within budgets (`InboundSettings`): a pace for each line, caps
/// on connections per address and in all (`ConnectionTable`), and a bound on the bytes of
/// unfinished lines held by all connections together (`PartialLineBudget`).
final class EnvelopeServer: DaemonService {
    /// The IPv4 listener, and the IPv6 one beside it on the same port when the host has IPv6.
    let listeners: [StreamListener]
    let service: HexService
    /// Stores what peers send, and says so.
    let intake: Intake
    /// Answers Pair envelopes; nil when playing a legacy peer (they are then unsupported).
    let pairing: PairingService?
    /// Answers Fetch envelopes; nil when playing a legacy peer (they are then unsupported).
    let files: FileServer?
    let wire: WireSettings
    let settings: InboundSettings
    let logger: Logger
    private let connections: ConnectionTable
    /// The connections its listeners hold descriptors for: the table's, and a newcomer's.
    private let slots: ConnectionSlots
    private let handshakes: HandshakeTable
    /// Gives memory back after a storm of connections was cut short.
    private let trimmer: MemoryTrimmer
    /// Decides which connections get a TLS handshake, and learns where known peers are.
    private let gate: HandshakeGate
    private let budget: PartialLineBudget
    private let pace: LinePace
    /// How this daemon answers: as hexd, or as the original app when it plays one.
    private let dialect: Dialect
    /// This device's TLS; nil when playing a legacy peer (everything is then plaintext).
    private let tls: TLSContext?
    /// What the budgets did, for `status`; `open` is read from the connection table.
    private let tally: Tally

    private final class Tally: Sendable {
        let counts = Mutex(ConnectionTally())
        func count(_ field: WritableKeyPath<ConnectionTally, Int>) { counts.withLock { $0[keyPath: field] += 1 } }
    }

    /// What the handshake gate, which every TLS listener shares, decided since the start.
    var gateCounts: HandshakeGate.Counts { gate.counts }

    /// Peer connections open now, and what the budgets closed since the start.
    var counts: ConnectionTally {
        var counts = tally.counts.withLock { $0 }
        counts.open = connections.count
        return counts
    }

    /// - Parameter maximumConnections: the configured cap, lowered to what the descriptor limit allows.
    init(
        listeners: [StreamListener], service: HexService, intake: Intake, pairing: PairingService?,
        files: FileServer?, wire: WireSettings, settings: InboundSettings,
        tls: TLSContext?, maximumConnections: Int, trimmer: MemoryTrimmer, gate: HandshakeGate, logger: Logger
    ) {
        self.gate = gate
        self.listeners = listeners
        self.pairing = pairing
        self.files = files
        self.tls = tls
        self.service = service
        self.intake = intake
        self.wire = wire
        self.settings = settings
        self.logger = logger
        connections = ConnectionTable(
            total: maximumConnections, perAddress: settings.maximumConnectionsPerAddress)
        slots = ConnectionSlots(for: connections)
        handshakes = HandshakeTable(capacity: Self.handshakesAtOnce)
        self.trimmer = trimmer
        let tally = Tally()
        self.tally = tally
        budget = PartialLineBudget(limit: settings.partialLineBudget) { remote, bytes in
            tally.count(\.cutOffForPartialLines)
            trimmer.burstFreed()
            logger.limited(
                "partial-line budget", .warning,
                "cut off \(remote?.description ?? "?"), holding \(bytes) bytes of an unfinished line: "
                    + "all connections together held more than \(settings.partialLineBudget)")
        }
        dialect = Dialect(wire.legacy ? .legacy : .current, versionID: wire.appVersion)
        pace = LinePace(
            idle: settings.idleTimeout, grace: settings.lineGrace,
            minimumBytesPerSecond: settings.lineMinimumRate)
    }

    /// Accepts until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for listener in listeners {
                group.addTask {
                    await acceptConnections(on: listener, slots: self.slots, logger: self.logger) { socket, _ in
                        await self.admit(socket)
                    }
                }
            }
        }
    }

    private func admit(_ socket: Socket) async {
        let remote = socket.remoteEndpoint
        let address = remote?.host ?? "?"
        let admission = connections.admit(socket, from: address)
        tally.count(\.accepted)
        switch admission {
        case .refused:
            tally.count(\.refusedPerAddress)
            logger.limited(
                "connections per address", .warning,
                "refused a connection from \(address): it has \(connections.perAddress) open already")
            return
        case .admittedByClosing(let stalest):
            tally.count(\.closedForRoom)
            trimmer.burstFreed()
            logger.limited(
                "connection cap", .warning,
                "\(connections.total) connections open: closed the one from \(stalest) "
                    + "that waited longest without a line")
        case .admitted:
            break
        }
        await serve(socket, remote: remote?.description ?? "?", address: address)
        connections.remove(socket)
        // What the connection held (TLS state, line buffers) goes back to the system within the
        // trimmer's interval, so memory falls back after many connections close.
        trimmer.burstFreed()
    }

    /// - Parameters:
    ///   - remote: the peer's address and port, for the log.
    ///   - address: its IP address, whose share of the inbox a plaintext hex counts against.
    private func serve(_ socket: Socket, remote: String, address: String) async {
        guard let stream = await open(socket, remote: remote) else { return }
        let connection = StreamConnection(
            stream: stream, maximumLineLength: wire.maximumLineLength, budget: budget)
        // Over TLS every envelope on the connection is from the key the handshake proved.
        let proof =
            (stream as? TLSStream).map {
                SenderProof.key(fingerprint: $0.peer.description, deviceID: $0.peerKey.deviceID.uppercaseText)
            } ?? .none
        // A paired peer's key proved: its address gets its handshakes whatever strangers do.
        if case .key(let fingerprint, let deviceID) = proof, let known = socket.remoteAddress,
            await intake.hasPaired(deviceID, byKey: fingerprint)
        {
            gate.markKnown(known)
        }
        while true {
            let first: LineFramer.Item?
            do {
                first = try await connection.readLine(pace: pace)
            } catch let error as SocketError where error.isTimeout {
                tally.count(\.closedAtDeadline)
                logger.limited(
                    "slow connection", .info,
                    "closed the connection from \(remote): no line within the deadline (\(pace.idle) idle, "
                        + "or \(pace.grace) plus one second per \(pace.minimumBytesPerSecond) bytes once begun)")
                return
            } catch {
                logger.debug("connection from \(remote) ended: \(error)")
                return
            }
            guard let first else { return }
            // A pipelining peer's lines that came with the first are acted on and answered together.
            var items = [first]
            while items.count < InboundRound.pipelineDepth, items.last != .lineTooLong,
                let next = connection.bufferedLine()
            {
                items.append(next)
            }
            let lines = items.compactMap { item -> [UInt8]? in
                guard case .line(let bytes) = item else { return nil }
                return bytes
            }
            if !lines.isEmpty {
                connections.progressed(socket)
                var pending = lines[...]
                while !pending.isEmpty {
                    let round = await handle(pending, from: remote, address: address, proof: proof)
                    do {
                        if !round.replies.isEmpty {
                            try await connection.writeLines(
                                round.replies.map { $0.encodedLine() },
                                timeout: .seconds(10))
                        }
                    } catch {
                        logger.debug("cannot reply to \(remote): \(error)")
                        return
                    }
                    // A file's bytes follow the replies owed before its Fetch, and the lines after
                    // it wait for the whole file.
                    if let fetch = round.fetch, let files {
                        let served = await files.serve(fetch, from: proof.deviceID, on: connection, remote: remote) {
                            connections.progressed(socket)
                        }
                        guard served else { return }
                    }
                    pending = round.rest
                }
            }
            if items.last == .lineTooLong {
                tally.count(\.closedForLongLines)
                logger.limited(
                    "line too long", .warning,
                    "\(remote) sent a line over \(wire.maximumLineLength) bytes; closing the connection")
                await close(stream, after: dialect.reply(toLineLongerThan: wire.maximumLineLength))
                return
            }
        }
    }

    /// TLS handshakes under way at most: each holds an SSL object and its buffers until the
    /// client finishes, so a storm of ClientHellos is bounded in memory, not only in connections.
    static let handshakesAtOnce = 1_024

    /// The stream a connection speaks, chosen by its first byte: TLS when it begins a handshake
    /// (0x16) and this daemon speaks TLS, else the plain socket (an envelope begins with `{`).
    /// Nil when the peer leaves, stays silent past the idle deadline, or fails the handshake.
    private func open(_ socket: Socket, remote: String) async -> (any ByteStream)? {
        guard let tls else { return socket }
        do {
            let first: UInt8?
            do {
                first = try await socket.peek(timeout: pace.idle)
            } catch let error as SocketError where error.isTimeout {
                tally.count(\.closedAtDeadline)
                throw error
            }
            guard let first else { return nil }
            guard first == 0x16 else {
                guard wire.plaintext == .accept else {
                    logger.limited(
                        "plaintext refused", .info, "refused a plaintext connection from \(remote) (--plaintext refuse)"
                    )
                    await close(
                        socket,
                        after: dialect.reply(
                            refusingConnection: "this daemon takes TLS only (--plaintext refuse); nothing was read"))
                    return nil
                }
                logger.debug("plaintext connection from \(remote)")
                return socket
            }
            // A stranger past its budget is reset before any cryptography.
            guard let admitted = gate.admit(socket, on: "hexd's TCP") else { return nil }
            if handshakes.begin(socket) {
                tally.count(\.closedInHandshake)
                trimmer.burstFreed()
                logger.limited(
                    "handshake cap", .warning,
                    "\(Self.handshakesAtOnce) TLS handshakes under way: "
                        + "closed the one that began longest ago")
            }
            defer { handshakes.end(socket) }
            // A stranger's session is kept in its ticket, not in the server's cache: a burst of
            // strangers then leaves no session behind (each holds a parsed certificate, scattered
            // through the heap for hours) and evicts no known peer's.
            let stream = try await TLSStream.handshake(
                over: socket, context: tls, as: .server, keepingSession: admitted == .knownPeer, timeout: pace.grace)
            tally.count(\.tlsHandshakes)
            if stream.isResumed { tally.count(\.resumedHandshakes) }
            logger.debug("TLS connection from \(remote), key \(stream.peer)\(stream.isResumed ? " (resumed)" : "")")
            return stream
        } catch {
            logger.limited("tls handshake", .info, "closed the connection from \(remote) before a line: \(error)")
            return nil
        }
    }

    /// Writes a last reply (when the dialect owes one) and ends the connection. It is half-closed
    /// first and what the peer still sends is read and dropped for a moment: closing with bytes
    /// unread would reset the connection and could destroy the reply before the peer reads it.
    private func close(_ stream: any ByteStream, after reply: Envelope?) async {
        if let reply { try? await stream.write(reply.encodedLine() + [UInt8(ascii: "\n")], timeout: .seconds(5)) }
        stream.channel.shutdownWrite()
        let until = ContinuousClock.now + .seconds(1)
        while until > .now, let count = try? await stream.read(maximumCount: 65_536, timeout: until - .now, { _ in }),
            count > 0
        {}
    }

    /// What acting on lines received together leaves to do.
    private struct Round {
        /// The replies owed, in the order of the lines they answer.
        var replies: [Envelope] = []
        /// A Fetch met among the lines: served once the replies are written.
        var fetch: Envelope?
        /// The lines after the Fetch, acted on once it is served.
        var rest: ArraySlice<[UInt8]> = []
    }

    /// Acts on lines received in this order and returns the replies owed, in the same order, as
    /// `InboundRound` decides: Stores and Alerts together, a Pair alone, a Fetch last.
    private func handle(
        _ lines: ArraySlice<[UInt8]>, from remote: String, address: String, proof: SenderProof
    ) async -> Round {
        var round = Round()
        var machine = InboundRound(servesPairing: pairing != nil, servesFetch: files != nil)
        for (index, bytes) in zip(lines.indices, lines) {
            let line = Result { () throws(EnvelopeDecodingError) in
                dialect.received(try Envelope.decode(from: bytes, limits: wire.envelopeLimits))
            }
            for step in machine.take(line) {
                await perform(step, into: &round, from: remote, address: address, proof: proof)
            }
            if machine.isOver {
                round.rest = lines[(index + 1)...]
                return round
            }
        }
        for step in machine.finish() {
            await perform(step, into: &round, from: remote, address: address, proof: proof)
        }
        return round
    }

    private func perform(
        _ step: InboundRound.Step, into round: inout Round, from remote: String, address: String, proof: SenderProof
    ) async {
        switch step {
        case .receive(let envelopes):
            round.replies += await receive(envelopes, from: remote, address: address, proof: proof)
        case .pair(let envelope):
            if let reply = await pairing?.receive(envelope, proof: proof, from: remote) { round.replies.append(reply) }
        case .unreadable(let error):
            logger.limited("not an envelope", .info, "\(remote) sent a line that is not an envelope: \(error)")
            if let reply = dialect.reply(toUnreadable: error) { round.replies.append(reply) }
        case .fetch(let envelope):
            round.fetch = envelope
        }
    }

    /// Stores or passes on envelopes of one connection, in one commit, and returns the replies owed.
    private func receive(
        _ envelopes: [Envelope], from remote: String, address: String,
        proof: SenderProof
    ) async -> [Envelope] {
        guard !envelopes.isEmpty else { return [] }
        var replies: [Envelope] = []
        let outcomes = await intake.take(envelopes, proof: proof, from: remote, address: address)
        for (envelope, outcome) in zip(envelopes, outcomes) {
            switch outcome {
            case .success(let outcome):
                if let reply = dialect.reply(to: envelope, outcome: outcome) { replies.append(reply) }
            case .failure(let error):
                if let reply = dialect.reply(toUnstored: envelope, because: "\(error)") { replies.append(reply) }
            }
        }
        return replies
    }
}
