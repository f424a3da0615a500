import HexCarrier
import HexControl
import HexKit
import HexNet

/// Serves the control socket: one JSON request per line, one JSON response per line; a `watch`
/// request turns the connection into a stream of events until the client hangs up.
struct ControlServer: DaemonService {
    let listener: StreamListener
    let handler: ControlHandler
    let events: EventLog
    let logger: Logger
    /// Clients served at once (`hexctl` calls and watches, the page's own go through the web
    /// server): a runaway script waits in the socket's backlog rather than take every descriptor.
    static let connectionsAtOnce = 64

    func run() async {
        await acceptConnections(on: listener, slots: ConnectionSlots(maximum: Self.connectionsAtOnce), logger: logger) {
            socket, _ in await serve(socket)
        }
    }

    private func serve(_ socket: Socket) async {
        let connection = StreamConnection(socket: socket, maximumLineLength: ControlLimits.requestLineBytes)
        while case .line(let bytes)? = try? await connection.readLine(timeout: nil) {
            let request: ControlRequest
            do {
                request = try ControlHandler.request(from: bytes)
            } catch {
                guard (try? await write(ControlResponse(error: error), to: socket)) != nil else { return }
                continue
            }
            if case .watch(let since) = request {
                await stream(events.watch(since: since), to: socket, reader: connection)
                return
            }
            guard await answer(request, on: socket) else { return }
        }
    }

    /// Carries out `request` and writes its answer; returns false when the client is gone.
    ///
    /// A client that closes its connection meanwhile (Ctrl-C on hexctl) cancels the request: a
    /// share stops its link commands and sends nothing, a send stops waiting.
    private func answer(_ request: ControlRequest, on socket: Socket) async -> Bool {
        await handler.answer(
            request, write: { try await write($0, to: socket) },
            gone: { await socket.waitForHangUp() })
    }

    private func write(_ response: ControlResponse, to socket: Socket) async throws {
        try await socket.writeLine(try ControlCoding.encode(response), timeout: .seconds(10))
    }

    /// Writes events until the client closes its end (noticed by reading) or a write fails.
    private func stream(_ events: AsyncStream<EventLog.Recorded>, to socket: Socket, reader: StreamConnection) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    guard (try? await write(ControlResponse(event: DaemonEvent(event)), to: socket)) != nil else {
                        return
                    }
                }
            }
            // Anything the client sends after `watch` is ignored; its end of the stream ends the watch.
            while case .line? = try? await reader.readLine(timeout: nil) {}
            group.cancelAll()
        }
    }
}
