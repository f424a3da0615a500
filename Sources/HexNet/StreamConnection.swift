/// A connected stream socket (TCP or Unix) that reads and writes newline-terminated lines.
///
/// Used by one task at a time: the framer's buffer is not shared.
public final class StreamConnection {
    public let socket: Socket
    private var framer: LineFramer
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)

    public init(socket: Socket, maximumLineLength: Int) {
        self.socket = socket
        framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    /// The next line (without its ending), `.lineTooLong`, or nil when the peer closed the stream.
    ///
    /// - Parameter idleTimeout: how long to wait for more bytes before giving up with
    ///   `SocketError.timedOut`; nil waits forever.
    public func readLine(idleTimeout: Duration?) async throws -> LineFramer.Item? {
        while true {
            if let item = framer.next() { return item }
            let count = try await socket.read(into: &readBuffer, timeout: idleTimeout)
            guard count > 0 else { return nil }
            framer.append(readBuffer[..<count])
        }
    }

    /// Writes `line` followed by `\n`.
    public func writeLine(_ line: some Collection<UInt8>, timeout: Duration?) async throws {
        try await socket.writeLine(line, timeout: timeout)
    }
}
