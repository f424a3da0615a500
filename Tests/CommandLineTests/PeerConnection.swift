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
