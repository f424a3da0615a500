import HexControl
import HexKit
import HexNet

/// Serves the control socket: one JSON request per line, one JSON response per line; a `watch`
/// request turns the connection into a stream of events until the client hangs up.
struct ControlServer: Sendable {
    let listener: StreamListener
    let handler: ControlHandler
    let events: EventLog
    let logger: Logger

    func run() async {
        await acceptConnections(on: listener, logger: logger) { socket in await serve(socket) }
    }

    private func serve(_ socket: Socket) async {
        let connection = StreamConnection(socket: socket, maximumLineLength: ControlLimits.requestLineBytes)
        while case .line(let bytes)? = try? await connection.readLine(timeout: nil) {
            let response: ControlResponse
            do {
                let request = try ControlCoding.decode(ControlRequest.self, from: bytes)
                if request.command == .watch {
                    await stream(events.watch(since: request.since ?? 0), to: socket, reader: connection)
                    return
                }
                guard (try? await handler.handle(request, write: { try await write($0, to: socket) })) != nil else { return }
                continue
            } catch let error as DecodingError {
                response = ControlResponse(error: ControlError(.usage, "not a control request: \(Self.describe(error))"))
            } catch {
                response = ControlResponse(error: ControlError(.usage, "not a control request: \(error)"))
            }
            guard (try? await write(response, to: socket)) != nil else { return }
        }
    }

    private func write(_ response: ControlResponse, to socket: Socket) async throws {
        try await socket.writeLine(try ControlCoding.encode(response), timeout: .seconds(10))
    }

    /// Writes events until the client closes its end (noticed by reading) or a write fails.
    private func stream(_ events: AsyncStream<DaemonEvent>, to socket: Socket, reader: StreamConnection) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    guard (try? await write(ControlResponse(event: event), to: socket)) != nil else { return }
                }
            }
            // Anything the client sends after `watch` is ignored; its end of the stream ends the watch.
            while case .line? = try? await reader.readLine(timeout: nil) {}
            group.cancelAll()
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.isEmpty ? context.debugDescription : "bad \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        @unknown default: "\(error)"
        }
    }
}
