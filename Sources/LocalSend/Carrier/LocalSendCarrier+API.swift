import Glibc
import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS
import HexWeb
import LocalSendCore

/// LocalSend's HTTPS API as hexd serves it: one request a connection, its TLS handshake within
/// the listener's caps, an offer held while its sender stays connected, uploads streamed
/// (`+Receiving`), and the routes of discovery and cancelling.
extension LocalSendCarrier {
    /// Serves one request on `channel` (a connection past the listener's admission, or a test's),
    /// then closes it.
    nonisolated func answer(_ channel: any ByteChannel) async {
        let deadline = ContinuousClock.now + Self.connectionDeadline
        let remote = channel.remoteEndpoint
        do {
            if handshakes.begin(channel) {
                logger.limited(
                    "localsend handshake cap", .info,
                    "LocalSend API: \(Self.handshakesAtOnce) TLS handshakes under way: closed the oldest")
            }
            let connection: TLSConnection
            do {
                defer { handshakes.end(channel) }
                connection = try await TLSConnection.handshake(
                    over: channel, context: client.tls, as: .server, timeout: deadlines.handshake)
            }
            var limits = HTTPRequestReader.Limits(bodyBytes: LocalSendUploadRequest.maximumSize)
            limits.streamedPaths = [Self.uploadPath]
            var reader = HTTPRequestReader(limits: limits)
            var response: HTTPResponse?
            while response == nil {
                var action = HTTPRequestReader.Action.needMore
                let count = try await connection.read(maximumCount: 65_536, timeout: deadline - .now) {
                    action = reader.read($0)
                }
                guard count > 0 else { return }
                switch action {
                case .needMore: continue
                case .refuse(let status, let reason): response = .text(status, reason)
                case .head(let request, let framing, let received):
                    connections.progressed(channel)
                    response = await upload(
                        request, framing: framing, first: received, over: connection, from: remote
                    ) { [connections] in connections.progressed(channel) }
                case .request(let request):
                    connections.progressed(channel)
                    let certificate = connection.peerCertificate
                    // Only an offer may wait (for the person): its sender may give up meanwhile.
                    let answer =
                        request.path == Self.preparePath
                        ? await whileConnected(channel) {
                            await self.route(request, from: remote, certificate: certificate)
                        } : await route(request, from: remote, certificate: certificate)
                    // Hidden, or the client gone, the connection closes unanswered.
                    guard let answer else { return }
                    response = answer
                }
            }
            // An answer may come after the person's yes, past the request's deadline: it has its own.
            if let response {
                try await connection.write(response.serialized(), timeout: Self.answerWriteTimeout)
                await Self.drain(connection)
            }
        } catch {
            logger.limited(
                "localsend connection", .debug, "LocalSend connection from \(remote?.description ?? "?"): \(error)")
        }
    }

    /// Runs `work`, a request's answer (which may wait for the person), while watching `channel`: a
    /// client that closes its connection meanwhile has given up (LocalSend 1.18 cancels a waiting
    /// `prepare-upload` so: `send_provider.dart`), and `work` is cancelled; nil then. Meanwhile the
    /// connection counts as busy, not idle (at most 16 requests are held for the person's answer).
    private nonisolated func whileConnected(
        _ channel: any ByteChannel, _ work: @escaping @Sendable () async -> HTTPResponse?
    ) async -> HTTPResponse? {
        let answering = Task { await work() }
        let watching = Task { [connections] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await channel.waitForPeerClose()
                    if !Task.isCancelled { answering.cancel() }
                }
                group.addTask {
                    while (try? await Task.sleep(for: .seconds(5))) != nil { connections.progressed(channel) }
                }
                await group.next()
                group.cancelAll()
            }
        }
        // The connection's own task cancelled (hexd stops) cancels both.
        let answer = await withTaskCancellationHandler {
            await answering.value
        } onCancel: {
            answering.cancel()
        }
        watching.cancel()
        // Awaited before the answer is written: the watch no longer waits on the connection then.
        await watching.value
        return answering.isCancelled ? nil : answer
    }

    /// How long, and how much of, what a client still sends after its answer is read and dropped.
    static let drainTime: Duration = .seconds(2)
    static let drainBytes = 64 << 20

    /// Half-closes the connection and reads what the client still sends, dropped, until it
    /// closes, at most `drainTime` and `drainBytes`: a client that writes its whole body before it
    /// reads (an upload refused before its bytes were read) would otherwise get a reset, which
    /// loses the answer (RFC 9112, section 9.6).
    private static func drain(_ connection: TLSConnection) async {
        connection.channel.shutdownWrite()
        let deadline = ContinuousClock.now + drainTime
        var dropped = 0
        while dropped < drainBytes && ContinuousClock.now < deadline {
            guard let count = try? await connection.read(maximumCount: 65_536, timeout: deadline - .now, { _ in }),
                count > 0
            else { return }
            dropped += count
        }
    }

    /// The answer to one request of LocalSend's API; nil (the connection closes unanswered) for
    /// `register` and `info` while hidden, which are how devices find hexd.
    private func route(
        _ request: HTTPRequest, from remote: Endpoint?, certificate: Fingerprint?
    ) async -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("POST", Self.preparePath):
            return await prepareUpload(request, from: remote, certificate: certificate)
        case ("POST", "/api/localsend/v2/cancel"):
            // Answered 200 whatever it cancels, as 1.18's server answers (packages/core/src/http/
            // server/v2.rs, `cancel`); only the address a session or an offer came from cancels it.
            guard let address = remote?.address else { return HTTPResponse(.ok) }
            if let session = request.query["sessionId"] {
                // hexd's own send, its receiver's person cancelling (receive_controller.dart,
                // cancelSession), or a session of a sender here.
                if !cancelSending(session, from: address), reception.cancel(session: session, from: address) {
                    await keepEndedSessions()
                }
            } else {
                // The sender gives up its offer waiting for the person, whose id it does not know yet.
                cancelWaitingOffer(from: address)
            }
            return HTTPResponse(.ok)
        case _ where !isVisible:
            return nil
        case ("GET", "/api/localsend/v2/info"), ("GET", "/api/localsend/v1/info"):
            return json(ownDevice(announce: nil))
        case ("POST", "/api/localsend/v2/register"), ("POST", "/api/localsend/v1/register"):
            guard let device = LocalSendDevice.decode(request.body) else {
                return .text(.badRequest, "the body is not a LocalSend device's description")
            }
            guard device.fingerprint.uppercased() != fingerprint else {
                return .text(HTTPStatus(412, "Precondition Failed"), "Self-discovered")
            }
            if let address = remote.flatMap(\.address), !isHexd(device) {
                let proven = certificate?.isClaimed(by: device.fingerprint) == true
                await perform(presence.registered(device, from: address, proven: proven, at: .now))
            }
            return json(ownDevice(announce: nil))
        default:
            return .text(.notFound, "no such LocalSend route")
        }
    }

    private func json(_ device: LocalSendDevice) -> HTTPResponse {
        HTTPResponse(.ok, contentType: "application/json", body: device.encoded())
    }
}
