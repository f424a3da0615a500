import Glibc
import HexEngine
import Testing

@testable import HexCarrier
@testable import HexDaemon
@testable import HexNet

@Suite(.timeLimit(.minutes(5))) struct ConnectionTableTests {
    private func socket() throws -> Socket { try Socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue)) }

    @Test func oneAddressGetsAtMostItsShare() throws {
        let table = ConnectionTable(total: 10, perAddress: 2)
        let sockets = try (0..<3).map { _ in try socket() }
        #expect(table.admit(sockets[0], from: "a") == .admitted)
        #expect(table.admit(sockets[1], from: "a") == .admitted)
        #expect(table.admit(sockets[2], from: "a") == .refused)
        table.remove(sockets[0])
        #expect(table.admit(sockets[2], from: "a") == .admitted, "a closed connection frees its place")
    }

    @Test func pastTheCapTheConnectionWithoutProgressLongestMakesRoom() throws {
        let table = ConnectionTable(total: 3, perAddress: 10)
        let sockets = try (0..<5).map { _ in try socket() }
        for (index, socket) in sockets.prefix(3).enumerated() {
            #expect(table.admit(socket, from: "h\(index)") == .admitted)
        }
        table.progressed(sockets[0])
        #expect(
            table.admit(sockets[3], from: "new") == .admittedByClosing("h1"),
            "h0 completed a line since; h1 is the stalest")
        #expect(table.admit(sockets[4], from: "new") == .admittedByClosing("h2"))
        #expect(table.count == 3)
    }

    /// Past the cap on handshakes under way, the one begun longest ago is shut down (its reader
    /// wakes to the end of the stream); one that ended is no longer counted.
    @Test func pastTheHandshakeCapTheOldestHandshakeIsClosed() async throws {
        let table = HandshakeTable(capacity: 2)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        var clients: [Socket] = []
        var accepted: [Socket] = []
        for _ in 0..<4 {
            clients.append(
                try await StreamConnector.tcp(
                    to: Endpoint(host: "127.0.0.1", port: listener.port),
                    timeout: .seconds(5)))
            accepted.append(try await listener.accept())
        }
        #expect(!table.begin(accepted[0]) && !table.begin(accepted[1]))
        table.end(accepted[1])
        #expect(!table.begin(accepted[2]), "an ended handshake frees its place")
        #expect(table.begin(accepted[3]), "the third at once makes room")
        let read = try await accepted[0].read(maximumCount: 16, timeout: .seconds(5)) { _ in }
        #expect(read == 0, "the oldest was shut down")
        withExtendedLifetime(clients) {}
    }

    @Test func theRecencyListKeepsTouchOrder() {
        var list = RecencyList<Int>()
        for key in 1...5 { list.touch(key) }
        list.touch(1)
        list.remove(2)
        #expect(list.oldest == 3 && list.count == 4)
        list.remove(3)
        list.remove(4)
        list.remove(5)
        #expect(list.oldest == 1)
        list.remove(1)
        #expect(list.oldest == nil && list.count == 0)
        list.touch(9)
        #expect(list.oldest == 9, "slots are reused")
    }
}

@Suite(.timeLimit(.minutes(5))) struct LogLimiterTests {
    @Test func aKindIsWrittenAFewTimesPerWindowThenCounted() {
        let limiter = LogLimiter()
        let start = ContinuousClock.now
        let decisions = (0..<20).map { _ in limiter.admit("flood", at: start) }
        #expect(decisions.filter { $0 != .suppress }.count == LogLimiter.linesPerWindow)
        #expect(limiter.admit("other", at: start) == .write(suppressedBefore: 0), "each kind has its own window")
        #expect(
            limiter.admit("flood", at: start + LogLimiter.window) == .write(suppressedBefore: 15),
            "the next window says how many were left out")
    }
}
