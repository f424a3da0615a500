import HexNet
import HexTLS

/// A connection to a daemon's envelope port at 127.0.0.1:`port`, opened as a peer opens one: over
/// TLS proving `identity`'s key, or plaintext when it is nil; from `source` when given (any
/// 127.x address plays another host).
func peerConnection(
    to port: UInt16, as identity: TLSIdentity?, from source: IPv4Address? = nil
) async throws -> (socket: Socket, connection: StreamConnection) {
    let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: port), timeout: .seconds(5),
                                               from: source)
    let stream: any ByteStream = if let identity {
        try await TLSStream.handshake(over: socket, context: try TLSContext(identity: identity), as: .client,
                                      timeout: .seconds(5))
    } else {
        socket
    }
    return (socket, StreamConnection(stream: stream, maximumLineLength: 1 << 20))
}
