import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import Synchronization
import Testing

@testable import HexDaemon

/// Sends to one peer share a TLS connection kept open between them; a kept connection the peer
/// closed is replaced, the envelope sent again with the same messageID. Real sockets, real TLS.
@Suite(.timeLimit(.minutes(5))) struct ConnectionPoolTests {
    /// A TLS peer that acknowledges every line, except that on its first connection it answers
    /// only `answered` lines and then closes at the next one, unanswered (a receiver whose idle
    /// deadline passes as the sender writes). It records every messageID it read, per connection.
    final class ClosingPeer: Sendable {
        private let listener: StreamListener
        let key: Fingerprint
        private final class Seen: Sendable {
            let ids = Mutex<[[String]]>([])
        }

        private let seen = Seen()
        private let task: Task<Void, Never>
        var port: UInt16 { listener.port }
        /// The messageIDs read on each connection, in order.
        var connections: [[String]] { seen.ids.withLock { $0 } }

        init(directory: TemporaryDirectory, answered: Int) throws {
            let (identity, _) = try TLSIdentity.loadOrCreate(
                keyPath: directory.file("peer.key"), certificatePath: directory.file("peer.crt"), commonName: "peer")
            let context = try TLSContext(identity: identity)
            let listener = try StreamListener.tcp(address: .loopback, port: 0)
            self.listener = listener
            key = identity.fingerprint
            let seen = seen
            task = Task {
                var index = 0
                while let socket = try? await listener.accept() {
                    guard
                        let stream = try? await TLSStream.handshake(
                            over: socket, context: context, as: .server,
                            timeout: .seconds(30))
                    else { continue }
                    let connection = StreamConnection(stream: stream, maximumLineLength: 1 << 20)
                    let number = index
                    index += 1
                    seen.ids.withLock { $0.append([]) }
                    var lines = 0
                    while case .line(let bytes)? = try? await connection.readLine(timeout: .seconds(30)),
                        let envelope = try? Envelope.decode(from: bytes), let id = envelope.messageID
                    {
                        seen.ids.withLock { $0[number].append(id) }
                        if number == 0 && lines == answered { break }
                        lines += 1
                        let ack = Envelope.ack(
                            .stored, messageID: id, message: "stored", versionID: HexdVersion.current)
                        let line = ack.encodedLine()
                        guard (try? await connection.writeLine(line, timeout: .seconds(30))) != nil else { break }
                    }
                    socket.shutdown()
                }
            }
        }

        deinit { task.cancel() }
    }

    private func store(_ text: String) -> Envelope {
        .store(
            HexJM(
                senderUUID: UUID().uuidString, senderName: "test", hexDescription: text,
                links: [LinkJM(url: "https://example.com")]),
            versionID: HexdVersion.current, messageID: UUID().uuidString)
    }

    @Test func sendsToOnePeerShareAConnectionAndAClosedOneIsReplaced() async throws {
        let directory = try TemporaryDirectory()
        let peer = try ClosingPeer(directory: directory, answered: 2)
        let (identity, _) = try TLSIdentity.loadOrCreate(
            keyPath: directory.file("me.key"), certificatePath: directory.file("me.crt"), commonName: "me")
        let security = EnvelopeSender.Security.tls(try TLSContext(identity: identity), expected: peer.key)
        let endpoint = Endpoint(host: "127.0.0.1", port: peer.port)
        let pool = ConnectionPool()
        let envelopes = (0..<3).map { store("hex \($0)") }
        for envelope in envelopes {
            let delivery = try await EnvelopeSender.send(
                envelope, to: [endpoint], security: security,
                timeout: .seconds(30), maximumLineLength: 1 << 20, pool: pool)
            #expect(delivery.status == .stored && delivery.peerKey == peer.key)
        }
        let ids = envelopes.compactMap(\.messageID)
        // The first two shared one connection; the third found it closed unanswered and went
        // again, with the same messageID, on a second connection.
        #expect(peer.connections == [ids, [ids[2]]])
        #expect(pool.count == 1, "the second connection is kept in turn")
    }

    /// The defaults Protocol.md gives (15 s, 64 connections): the 65th kept makes the oldest go,
    /// and a kept connection is taken until its 15 s are up, never after.
    @Test func atMost64AreKeptFor15Seconds() async throws {
        let pool = ConnectionPool()
        #expect(pool.capacity == 64 && pool.idleLifetime == .seconds(15))
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let endpoint = Endpoint(host: "127.0.0.1", port: listener.port)
        var accepted: [Socket] = []
        var keys: [ConnectionPool.Key] = []
        let start = ContinuousClock.now
        for index in 0..<65 {
            let socket = try await StreamConnector.tcp(to: endpoint, timeout: .seconds(30))
            accepted.append(try await listener.accept())
            let digits = String(index, radix: 16)
            let key = try #require(Fingerprint(hex: String(repeating: "0", count: 64 - digits.count) + digits))
            keys.append(ConnectionPool.Key(endpoint: endpoint, peerKey: key))
            let connection = StreamConnection(stream: socket, maximumLineLength: 100)
            let channel = EnvelopeSender.Channel(
                endpoint: endpoint, socket: socket, connection: connection,
                peerKey: key)
            pool.keep(channel, at: start + .milliseconds(index))
        }
        #expect(pool.count == 64)
        #expect(pool.take(keys[0], at: start + .seconds(1)) == nil, "the oldest made room")
        #expect(pool.take(keys[1], at: start + .seconds(15)) != nil, "kept at 1 ms, taken at 15 s: within its lifetime")
        #expect(pool.take(keys[2], at: start + .seconds(15) + .milliseconds(2)) == nil, "past its 15 s")
        withExtendedLifetime(accepted) {}
    }

    @Test func aConnectionIsKeptOnlyForItsPeerAndItsKey() async throws {
        let directory = try TemporaryDirectory()
        let peer = try ClosingPeer(directory: directory, answered: 10)
        let (identity, _) = try TLSIdentity.loadOrCreate(
            keyPath: directory.file("me.key"), certificatePath: directory.file("me.crt"), commonName: "me")
        let context = try TLSContext(identity: identity)
        let endpoint = Endpoint(host: "127.0.0.1", port: peer.port)
        let pool = ConnectionPool(idleLifetime: .seconds(60))
        _ = try await EnvelopeSender.send(
            store("one"), to: [endpoint], security: .tls(context, expected: peer.key),
            timeout: .seconds(30), maximumLineLength: 1 << 20, pool: pool)
        #expect(
            pool.take(ConnectionPool.Key(endpoint: endpoint, peerKey: identity.fingerprint)) == nil,
            "another key gets nothing")
        #expect(
            pool.take(ConnectionPool.Key(endpoint: endpoint, peerKey: peer.key), at: .now + .seconds(61)) == nil,
            "past its lifetime it is gone")
        #expect(pool.count == 0)
    }
}
