import HexNet

/// A carrier's listener, whose connections come from strangers: each one accepted passes the
/// daemon's handshake admission (`HandshakeGate`, before any crypto) and the carrier's own table of
/// connections (`ConnectionTable`: so many from one address, so many in all), is served in a child
/// task (`acceptConnections`), and leaves the table once served, what it held given back
/// (`MemoryTrimmer`). Written once for every carrier whose connections last as long as their work.
package struct StrangerListener: Sendable {
    /// What the log calls the listener (`LocalSend API`).
    package let name: String
    package let gate: HandshakeGate
    package let connections: ConnectionTable
    /// The connections its listeners hold descriptors for: the table's, and a newcomer's.
    private let slots: ConnectionSlots
    package let trimmer: MemoryTrimmer
    package let logger: Logger

    package init(
        name: String, gate: HandshakeGate, connections: ConnectionTable, trimmer: MemoryTrimmer, logger: Logger
    ) {
        (self.name, self.gate, self.connections, self.trimmer, self.logger) = (name, gate, connections, trimmer, logger)
        slots = ConnectionSlots(for: connections)
    }

    /// Accepts connections on `listener` until cancelled, and has `serve` serve each one admitted.
    package func run(on listener: StreamListener, serve: @escaping @Sendable (Socket) async -> Void) async {
        let admitted = { (socket: Socket) in gate.admit(socket, on: name) != nil && admit(socket) }
        await acceptConnections(on: listener, slots: slots, logger: logger, admit: admitted) { socket, _ in
            await serve(socket)
            connections.remove(socket)
            trimmer.burstFreed()
        }
    }

    /// Whether the table takes `socket`; it says in the log whom it refused or closed for it.
    private func admit(_ socket: Socket) -> Bool {
        let address = socket.remoteEndpoint?.host ?? "?"
        switch connections.admit(socket, from: address) {
        case .refused:
            logger.limited(
                name + " per address", .info,
                "\(name): refused a connection from \(address): it has \(connections.perAddress) open")
            return false
        case .admittedByClosing(let stalest):
            logger.limited(
                name + " connection cap", .info,
                "\(name): \(connections.total) connections open: closed the one from \(stalest) "
                    + "that went longest without progress")
            return true
        case .admitted:
            return true
        }
    }
}
