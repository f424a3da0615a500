import HexKit
import HexNet

/// A connection to a running daemon's control socket.
public final class ControlClient {
    private let connection: StreamConnection

    /// Connects to the daemon whose control socket is at `path`.
    /// - Parameter maximumResponseLength: the longest response line read; longer is an error.
    /// - Throws: `SocketError` when no daemon listens there.
    public init(socketPath path: String, maximumResponseLength: Int = ControlLimits.responseLineBytes) throws {
        connection = StreamConnection(
            socket: try StreamConnector.unix(path: path), maximumLineLength: maximumResponseLength)
    }

    /// Sends one request and returns the first response line.
    public func request(_ request: ControlRequest, timeout: Duration?) async throws -> ControlResponse {
        try await connection.writeLine(try ControlCoding.encode(request), timeout: .seconds(10))
        return try await nextResponse(timeout: timeout)
    }

    /// Sends a list request and hands each item's response to `item`, in order, as it arrives.
    /// - Throws: the daemon's `ControlError`, or what reading fails with.
    public func list(_ request: ControlRequest, timeout: Duration?, item: (ControlResponse) throws -> Void) async throws
        -> ListEnd
    {
        try await connection.writeLine(try ControlCoding.encode(request), timeout: .seconds(10))
        while true {
            let response = try await nextResponse(timeout: timeout)
            if let error = response.error { throw error }
            if let end = response.end { return end }
            try item(response)
        }
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
