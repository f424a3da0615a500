import HexKit
import HexNet

/// A connection to a running daemon's control socket.
public final class ControlClient {
    private let connection: StreamConnection

    /// The control socket's file name inside the data directory.
    public static let socketName = "hexd.sock"

    /// Connects to the daemon whose control socket is at `path`.
    /// - Throws: `SocketError` when no daemon listens there.
    public init(socketPath path: String) throws {
        connection = StreamConnection(socket: try StreamConnector.unix(path: path), maximumLineLength: 64 << 20)
    }

    /// Sends one request and returns the first response line.
    public func request(_ request: ControlRequest, timeout: Duration?) async throws -> ControlResponse {
        try await connection.writeLine(try ControlCoding.encode(request), timeout: .seconds(10))
        return try await nextResponse(timeout: timeout)
    }

    /// The next response line (for `watch`, the next event).
    public func nextResponse(timeout: Duration?) async throws -> ControlResponse {
        switch try await connection.readLine(timeout: timeout) {
        case .line(let bytes): return try ControlCoding.decode(ControlResponse.self, from: bytes)
        case .lineTooLong: throw ControlError(.failed, "the daemon's response is too long")
        case nil: throw ControlError(.failed, "the daemon closed the connection")
        }
    }
}
