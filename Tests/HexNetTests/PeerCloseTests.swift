import HexNet
import Testing

/// A server that waits with a request read whole learns that its client gave up (each wait here
/// returns, or the suite's time limit fails it), and reads nothing meanwhile.
@Suite(.timeLimit(.minutes(1))) struct PeerCloseTests {
    @Test func aClientsCloseIsSeenEvenWithBytesUnread() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        async let accepted = listener.accept()
        let client = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        let server = try await accepted
        let watching = Task { await server.waitForPeerClose() }
        try await Task.sleep(for: .milliseconds(100))
        try await client.write(Array("unread".utf8), timeout: .seconds(5))
        client.shutdown()
        await watching.value
        #expect(try await server.peek(timeout: .seconds(1)) == UInt8(ascii: "u"), "nothing was read")
        let open = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        let idle = try await listener.accept()
        let cancelled = Task { await idle.waitForPeerClose() }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        await cancelled.value
        withExtendedLifetime(open) {}
    }
}
