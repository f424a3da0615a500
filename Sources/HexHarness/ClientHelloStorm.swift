import HexNet
import HexTLS
import Synchronization

/// A storm of bare TLS handshakes for the hostile-network tests and `hexbench identity`: each
/// connection, from one of many loopback addresses, sends a canned ClientHello and waits for the
/// daemon's answer without ever finishing the handshake. What came back tells whether the daemon
/// did its half of the handshake (it answered) or closed the connection before any cryptography.
public enum ClientHelloStorm {
    /// The first flight a TLS client proving `identity`'s key sends (its ClientHello), caught by a
    /// listener of its own: what a storm of bare handshakes replays.
    public static func hello(as identity: TLSIdentity) async throws -> [UInt8] {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let port = listener.port
        let client = Task {
            let socket = try await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
            // Fails once the listener closes the connection: only its first flight is wanted.
            _ = try? await TLSStream.handshake(
                over: socket, context: try TLSContext(identity: identity), as: .client, timeout: .seconds(5))
        }
        defer { client.cancel() }
        let accepted = try await listener.accept()
        defer { accepted.shutdown() }
        var hello: [UInt8] = []
        // One TLS record: a 5-byte header whose last two bytes are the length of what follows.
        while hello.count < 5 || hello.count < 5 + (Int(hello[3]) << 8 | Int(hello[4])) {
            guard try await accepted.read(maximumCount: 16_384, timeout: .seconds(5), { hello += $0 }) > 0 else {
                throw TLSError("read a ClientHello", reason: "the client closed first")
            }
        }
        return hello
    }

    /// What the storm's connections saw.
    public struct Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Connections made.
        public var connected = 0
        /// The daemon answered the ClientHello: it did its half of a handshake.
        public var answered = 0
        /// The daemon ended the connection (a reset or an end of stream) without a byte of answer.
        public var cutBeforeAnswer = 0
        /// Connections not made, or neither answered nor ended within the wait.
        public var failed = 0

        public var description: String {
            "\(connected) connected: \(answered) answered, \(cutBeforeAnswer) cut before an answer, \(failed) failed"
        }
    }

    /// Opens `count` connections to 127.0.0.1:`port`, `perSecond` a second, round-robin from
    /// `sources`; each writes `hello` and waits at most `wait` for the daemon's first byte or the
    /// end of the connection. Returns once every connection is over.
    public static func run(
        _ hello: [UInt8], count: Int, perSecond: Int, to port: UInt16, from sources: [String],
        wait: Duration = .seconds(3)
    ) async -> Outcome {
        guard !sources.isEmpty else { return Outcome() }
        let tally = Tally()
        let start = ContinuousClock.now
        let spacing = Duration.seconds(1.0 / Double(max(perSecond, 1)))
        await withDiscardingTaskGroup { group in
            for index in 0..<count {
                try? await Task.sleep(until: start + spacing * index, clock: .continuous)
                let source = IPAddress(sources[index % sources.count])
                group.addTask {
                    let seen = await attempt(hello, to: port, from: source, wait: wait)
                    tally.outcome.withLock { outcome in
                        if seen != .notConnected { outcome.connected += 1 }
                        switch seen {
                        case .answered: outcome.answered += 1
                        case .cut: outcome.cutBeforeAnswer += 1
                        case .notConnected, .silent: outcome.failed += 1
                        }
                    }
                }
            }
        }
        return tally.outcome.withLock { $0 }
    }

    /// The counts, shared with the connections' tasks.
    private final class Tally: Sendable {
        let outcome = Mutex(Outcome())
    }

    /// How one connection went.
    private enum Seen {
        case notConnected, answered, cut, silent
    }

    private static func attempt(_ hello: [UInt8], to port: UInt16, from source: IPAddress?, wait: Duration) async
        -> Seen
    {
        guard
            let socket = try? await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5), from: source)
        else { return .notConnected }
        defer { socket.shutdown() }
        do {
            try await socket.write(hello, timeout: wait)
            let read = try await socket.read(maximumCount: 1, timeout: wait) { _ in }
            return read > 0 ? .answered : .cut
        } catch let error as SocketError where error.isTimeout {
            return .silent
        } catch {
            // A reset: the daemon closed the connection unanswered.
            return .cut
        }
    }
}
