import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport

/// A connection to a daemon's envelope port at 127.0.0.1:`port`, opened as a peer opens one: over
/// TLS proving `identity`'s key, or plaintext when it is nil; from `source` when given (any
/// 127.x address plays another host).
func peerConnection(
    to port: UInt16, as identity: TLSIdentity?, from source: IPAddress? = nil
) async throws -> (socket: Socket, connection: StreamConnection) {
    let socket = try await StreamConnector.tcp(
        to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5),
        from: source)
    let stream: any ByteStream =
        if let identity {
            try await TLSStream.handshake(
                over: socket, context: try TLSContext(identity: identity), as: .client,
                timeout: .seconds(5))
        } else {
            socket
        }
    return (socket, StreamConnection(stream: stream, maximumLineLength: 1 << 20))
}

/// Writes `envelopes` to 127.0.0.1:`port` on one connection, pipelined, as `identity` over TLS
/// (plaintext when nil), from `source` when given, and returns an answer for each.
func exchange(
    _ envelopes: [Envelope], port: UInt16, as identity: TLSIdentity?, from source: IPAddress? = nil
) async throws -> [Envelope] {
    let (socket, connection) = try await peerConnection(to: port, as: identity, from: source)
    defer { socket.shutdown() }
    try await connection.writeLines(envelopes.map { $0.encodedLine() }, timeout: .seconds(10))
    var answers: [Envelope] = []
    for _ in envelopes {
        guard case .line(let line)? = try await connection.readLine(timeout: .seconds(10)) else {
            throw TLSError("read the answer", reason: "none came")
        }
        answers.append(try Envelope.decode(from: line))
    }
    return answers
}

/// A key and certificate of a peer the test plays, kept in `directory`.
func peerIdentity(_ name: String, in directory: TemporaryDirectory) throws -> TLSIdentity {
    try TLSIdentity.loadOrCreate(
        keyPath: directory.file(name + ".key"), certificatePath: directory.file(name + ".crt"),
        commonName: name
    ).0
}

/// The first flight a TLS client proving `identity`'s key sends (its ClientHello), caught by a
/// listener of the test's own: what a storm of bare handshakes replays.
func cannedClientHello(as identity: TLSIdentity) async throws -> [UInt8] {
    let listener = try StreamListener.tcp(address: .loopback, port: 0)
    let port = listener.port
    let client = Task {
        let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5))
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
