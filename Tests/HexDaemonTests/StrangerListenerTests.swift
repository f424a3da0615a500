import HexCarrier
import HexNet
import Synchronization
import Testing

/// A carrier's listener of strangers (LocalSend's API, Quick Share's): the table's caps hold over
/// real loopback connections, and a connection leaves the table once served.
@Suite(.timeLimit(.minutes(2))) struct StrangerListenerTests {
    /// How long one step may wait before the test calls it a hang. Generous on purpose: in the first
    /// seconds of `swift test` every suite starts at once on two cores, with the hexd processes the
    /// process tests start, and an accepted connection measured 2.7 s to be served (5 s was too little).
    static let patience = Duration.seconds(30)

    /// Connects from `source` and says whether the connection was served: the server writes one byte
    /// to each connection it serves, and a refused one is closed unwritten.
    static func connect(to port: UInt16, from source: String) async throws -> (Socket, served: Bool) {
        let address = try #require(IPAddress(source))
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: port), timeout: patience, from: address)
        // A connection neither served nor closed times out here, and fails the test.
        let count = try await socket.read(maximumCount: 1, timeout: patience) { _ in }
        return (socket, count == 1)
    }

    @Test func theTableRefusesPastAnAddressCapMakesRoomPastTheTotalAndEmpties() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let table = ConnectionTable(total: 2, perAddress: 1)
        let logger = Logger(level: .error)
        let strangers = StrangerListener(
            name: "Test", gate: HandshakeGate(budgets: .init(strangerHandshakes: 64), logger: logger),
            connections: table, trimmer: MemoryTrimmer(), logger: logger)
        let served = Atomic(0)
        let serving = Task {
            await strangers.run(on: listener) { socket in
                served.add(1, ordering: .relaxed)
                try? await socket.write([43], timeout: .seconds(5))
                // Held until the client closes, or the table closes it for a newcomer.
                _ = try? await socket.read(maximumCount: 16, timeout: .seconds(30)) { _ in }
            }
        }
        defer { serving.cancel() }
        let first = try await Self.connect(to: listener.port, from: "127.0.0.1")
        let again = try await Self.connect(to: listener.port, from: "127.0.0.1")
        #expect(first.served && !again.served, "one connection from an address, and no more")
        let second = try await Self.connect(to: listener.port, from: "127.0.0.2")
        #expect(second.served && table.count == 2)
        let third = try await Self.connect(to: listener.port, from: "127.0.0.3")
        #expect(third.served, "past the total, a newcomer is served")
        let closed = try await first.0.read(maximumCount: 1, timeout: Self.patience) { _ in }
        #expect(closed == 0, "the stalest connection was closed for it")
        #expect(served.load(ordering: .relaxed) == 3)
        second.0.shutdown()
        third.0.shutdown()
        let deadline = ContinuousClock.now + Self.patience
        while table.count > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(table.count == 0, "served connections leave the table")
        withExtendedLifetime(again.0) {}
    }
}
