import Glibc
import HexCarrier
import HexCommandLine
import HexControl
import HexKit
import HexNet
import HexWeb

/// Serves the inbox page on loopback: its files, the control API over HTTP (`POST /control`, the
/// same JSON as the control socket) and the event stream (`GET /events`, Server-Sent Events).
/// Every request passes `WebAccess` first; each connection carries one request, read whole
/// within `WebSettings.requestDeadline` of its accept, and the connections are capped as the
/// envelope server's are (`ConnectionTable`).
struct WebServer: DaemonService {
    let listener: StreamListener
    let access: WebAccess
    let handler: ControlHandler
    let events: EventLog
    /// This start's number: event ids are `BOOT.SEQ`, so that a browser resuming across a
    /// restart (sequence numbers begin again at 1) is not taken for one that is up to date.
    let boot: UInt64
    let settings: WebSettings
    /// The page's address and opening page, removed when it stops.
    let files: [String]
    let logger: Logger
    private let connections: ConnectionTable

    /// The server for `settings`, its token and address written in `dataDirectory`; nil when there
    /// is to be no page, or when its port is taken (logged: the daemon goes on without it).
    /// - Throws: when the token or the address cannot be written.
    static func start(
        _ settings: WebSettings, dataDirectory: DataDirectory, handler: ControlHandler, events: EventLog, boot: UInt64,
        logger: Logger
    ) throws -> WebServer? {
        guard let address = settings.address else { return nil }
        let listener: StreamListener
        do {
            listener = try StreamListener.tcp(address: .v4(address.host), port: address.port, backlog: 64)
        } catch {
            logger.warning(
                "no inbox page: cannot listen on \(address) (\(error)); "
                    + "is another hexd serving its page there? Choose another with --web HOST:PORT")
            return nil
        }
        let token = try WebToken.loadOrCreate(at: dataDirectory.webTokenPath)
        let served = WebSettings.Address(host: address.host, port: listener.port)
        try PrivateFile.write(
            Array(openingPage(url: "http://\(served)/?token=\(token)").utf8),
            to: dataDirectory.webOpenPath)
        try PrivateFile.write(Array("\(served)\n".utf8), to: dataDirectory.webAddressPath)
        let access = WebAccess(token: token, host: "\(address.host)", port: served.port)
        return WebServer(
            listener: listener, access: access,
            handler: handler, events: events, boot: boot, settings: settings,
            files: [dataDirectory.webAddressPath, dataDirectory.webOpenPath], logger: logger,
            // No cap per address: every client of a page on loopback has the same one, and
            // one local user must not lock out the others. Past the total, the stalest goes.
            connections: ConnectionTable(total: settings.maximumConnections, perAddress: .max))
    }

    func run() async {
        logger.info("inbox page at http://\(access.authorities.sorted().first ?? ""); open it with hexctl open")
        await acceptConnections(on: listener, slots: ConnectionSlots(for: connections), logger: logger) { socket, _ in
            await admit(socket)
        }
        files.forEach { unlink($0) }
    }

    /// A page that sends the browser on to `url` and its own fragment (`#peers`). Opened as a
    /// file, it keeps the token out of the browser's command line, which any user can read.
    private static func openingPage(url: String) -> String {
        """
        <!doctype html>
        <meta charset="utf-8">
        <meta name="referrer" content="no-referrer">
        <meta http-equiv="refresh" content="0;url=\(url)">
        <title>hexd</title>
        <script>location.replace("\(url)" + location.hash)</script>
        <p><a href="\(url)">Open the hexd page</a></p>

        """
    }

    private func admit(_ socket: Socket) async {
        switch connections.admit(socket, from: socket.remoteEndpoint?.host ?? "?") {
        case .refused: return
        case .admittedByClosing(let stalest):
            logger.limited(
                "page connections", .warning,
                "\(connections.total) page connections open: "
                    + "closed the one from \(stalest) that waited longest without a request")
        case .admitted: break
        }
        await serve(socket)
        connections.remove(socket)
    }

    private func serve(_ socket: Socket) async {
        let deadline = ContinuousClock.now + settings.requestDeadline
        var reader = HTTPRequestReader(limits: .init(bodyBytes: ControlLimits.requestLineBytes))
        var action = HTTPRequestReader.Action.needMore
        while action == .needMore {
            var chunk: [UInt8] = []
            do {
                let count = try await socket.read(maximumCount: 16_384, timeout: deadline - .now) {
                    chunk.append(contentsOf: $0)
                }
                guard count > 0 else { return }
            } catch let error as SocketError where error.isTimeout {
                logger.limited(
                    "slow page request", .info,
                    "closed a page connection: no whole request within "
                        + "\(settings.requestDeadline)")
                await send(
                    .text(.requestTimeout, "the request did not arrive within \(settings.requestDeadline)"),
                    to: socket)
                return
            } catch {
                return
            }
            action = reader.read(chunk)
        }
        switch action {
        // No path of the page streams its body: a head alone is never read here.
        case .needMore, .head: return
        case .refuse(let status, let reason): await send(.text(status, reason), to: socket)
        case .request(let request):
            connections.progressed(socket)
            await respond(to: request, on: socket)
        }
    }

    private func respond(to request: HTTPRequest, on socket: Socket) async {
        switch access.decide(request) {
        case .refused(let status, let reason):
            await send(.text(status, reason), to: socket)
        case .login:
            // Not a redirect: a browser that came from another site (the opening file, a link)
            // would not send a SameSite=Strict cookie on the redirect's request. A navigation from
            // this page to itself is same-site, and leaves the token out of the address bar.
            await send(
                Self.pageFile(
                    "text/html; charset=utf-8", Array(Self.signingIn.utf8),
                    headers: [("Set-Cookie", access.sessionCookie)]), to: socket)
        case .allowed:
            switch (request.method, request.path) {
            case ("POST", "/control"): await control(request, on: socket)
            case ("GET", "/events"): await stream(request, on: socket)
            case ("GET", "/"):
                let document = PageAssets.document(firstScreen: await firstScreen())
                await send(Self.pageFile("text/html; charset=utf-8", document), to: socket)
            case ("GET", let path):
                guard let asset = PageAssets.named(path) else {
                    return await send(.text(.notFound, "no such page"), to: socket)
                }
                await send(Self.pageFile(asset.contentType, asset.bytes), to: socket)
            default:
                await send(
                    .text(
                        .methodNotAllowed,
                        "\(request.method.prefix(32)) \(request.path.prefix(200)) "
                            + "is not served: the page takes GET, and POST /control"), to: socket)
            }
        }
    }

    /// A file of the page, under the page's Content-Security-Policy.
    private static func pageFile(_ contentType: String, _ body: [UInt8], headers: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(
            .ok, contentType: contentType, body: body,
            headers: headers + [("Content-Security-Policy", PageAssets.contentSecurityPolicy)])
    }

    /// What the page shows first, brought with the document so that it needs no round trip: the
    /// control API's lines for `status` and for the inbox's first page, as the page would ask.
    private func firstScreen() async -> [UInt8] {
        func lines(_ request: ControlRequest) async -> [[UInt8]] {
            var lines: [[UInt8]] = []
            _ = try? await handler.handle(request) { lines.append(try ControlCoding.encode($0)) }
            return lines
        }
        let status = await lines(.status).first ?? Array("null".utf8)
        let inbox = await lines(.inboxList(ListPage(limit: Self.firstPageSize)))
        return Array(#"{"status":"#.utf8) + status + Array(#","inbox":["#.utf8)
            + Array(inbox.joined(separator: [UInt8(ascii: ",")])) + Array("]}".utf8)
    }

    /// Hexes on the inbox's first page (the page's script asks for as many).
    private static let firstPageSize = 50

    /// One control request, answered with the control socket's response lines (NDJSON): a list
    /// streams its items, a send its `queued` line and then its outcome.
    private func control(_ request: HTTPRequest, on socket: Socket) async {
        let control: ControlRequest
        do {
            control = try ControlHandler.request(from: request.body)
        } catch {
            return await send(
                HTTPResponse(
                    .badRequest, contentType: "application/x-ndjson",
                    body: Self.line(ControlResponse(error: error))), to: socket)
        }
        if case .watch = control {
            let error = ControlError(.usage, "watch is GET /events on the page")
            return await send(
                HTTPResponse(
                    .badRequest, contentType: "application/x-ndjson",
                    body: Self.line(ControlResponse(error: error))), to: socket)
        }
        let head = HTTPResponse(.ok, contentType: "application/x-ndjson").head(length: nil)
        guard (try? await socket.write(head, timeout: Self.writeTimeout)) != nil else { return }
        _ = await handler.answer(
            control, write: { try await socket.write(Self.line($0), timeout: Self.writeTimeout) },
            gone: { await Self.waitForClose(socket) })
    }

    /// The event log as Server-Sent Events: `id: BOOT.SEQ`, `data:` the control socket's event
    /// line. A browser that reconnects sends the last id it saw (`Last-Event-ID`) and gets what
    /// it missed of the retained events; one that comes back after a restart gets this run's
    /// events from the first. Without an id, the stream starts with the next event.
    private func stream(_ request: HTTPRequest, on socket: Socket) async {
        let since = Self.resumePoint(request.headers["last-event-id"] ?? request.query["since"], boot: boot)
        let head = HTTPResponse(.ok, contentType: "text/event-stream").head(length: nil)
        guard (try? await socket.write(head + Array("retry: 2000\n\n".utf8), timeout: Self.writeTimeout)) != nil
        else { return }
        let watched = await events.watch(since: since)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in watched {
                    let message =
                        Array("id: \(boot).\(event.seq)\ndata: ".utf8)
                        + Self.line(ControlResponse(event: DaemonEvent(event))) + [0x0A]
                    guard (try? await socket.write(message, timeout: Self.writeTimeout)) != nil else { return }
                }
            }
            await Self.waitForClose(socket)
            group.cancelAll()
        }
    }

    /// The sequence number to resume after: the id's when it is this start's, 0 (every retained
    /// event) when it is an earlier start's, and the newest (nothing past) without one.
    static func resumePoint(_ lastEventID: String?, boot: UInt64) -> UInt64 {
        guard let lastEventID else { return .max }
        let parts = lastEventID.split(separator: ".")
        guard parts.count == 2, let eventBoot = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return .max }
        return eventBoot == boot ? sequence : 0
    }

    private static let writeTimeout: Duration = .seconds(10)

    private static let signingIn = """
        <!doctype html>
        <meta charset="utf-8">
        <meta http-equiv="refresh" content="0;url=/">
        <title>hexd</title>
        <p><a href="/">Open the inbox</a></p>

        """

    private static func line(_ response: ControlResponse) -> [UInt8] {
        ((try? ControlCoding.encode(response)) ?? Array(#"{"ok":false}"#.utf8)) + [0x0A]
    }

    private func send(_ response: HTTPResponse, to socket: Socket) async {
        _ = try? await socket.write(response.serialized(), timeout: Self.writeTimeout)
    }

    /// Returns when the browser closes the connection (a TCP close is a read of nothing); what it
    /// sends meanwhile is read and dropped.
    private static func waitForClose(_ socket: Socket) async {
        while !Task.isCancelled {
            let count = try? await socket.read(maximumCount: 4_096, timeout: nil) { _ in }
            guard let count, count > 0 else { return }
        }
    }
}
