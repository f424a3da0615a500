import HexCommandLine
import HexKit
import HexNet

/// `hexctl raw HOST:PORT FILE`: writes the file to the peer as-is and prints what comes back.
func runRaw(_ invocation: Invocation) async throws -> ExitCode {
    let words = invocation.arguments.positionals
    if let first = words.first, let written = Endpoint.bracketed(first, defaultPort: DefaultPorts.envelopes) {
        throw UsageError("write an IPv6 address in brackets: \(written), not '\(first)'")
    }
    guard words.count == 2, let endpoint = Endpoint(parsing: words[0]) else {
        throw UsageError("give HOST:PORT (or [IPV6]:PORT) and an envelope file")
    }
    let timeout = Duration.seconds(try invocation.seconds(.timeout) ?? 2)
    var bytes = Array(try readInput(words[1]))
    if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }

    let socket: Socket
    do {
        socket = try await StreamConnector.tcp(to: endpoint, timeout: timeout)
        // Written whole, with no framing of ours: the point is to send the peer exactly these bytes.
        try await socket.writeLine(bytes.dropLast(), timeout: timeout)
    } catch {
        throw CommandFailure(.temporaryFailure, "\(error)")
    }
    let connection = StreamConnection(socket: socket, maximumLineLength: EnvelopeLimits.defaultMaximumLineLength)
    while true {
        let item: LineFramer.Item?
        do {
            item = try await connection.readLine(timeout: timeout)
        } catch let error as SocketError where error.isTimeout {
            return .success
        }
        switch item {
        case .line(let line): print(String(decoding: line, as: UTF8.self))
        case .lineTooLong:
            throw CommandFailure(
                .failure, "the peer sent a reply over \(EnvelopeLimits.defaultMaximumLineLength) bytes")
        case nil: return .success
        }
    }
}
