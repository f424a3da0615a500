import HexKit
import HexNet
import HexTLS
import HexWeb

/// hexd's requests to LocalSend devices: one HTTPS request per connection, hexd's persona shown
/// as the client certificate (LocalSend 1.18 requires one), and the device's certificate checked
/// against the fingerprint it claims before a byte is written.
struct LocalSendClient: Sendable {
    let tls: ForeignTLSContext
    /// The longest the connection and its handshake may take, whatever the request's timeout: a
    /// device that is there answers them at once, even when its person takes minutes to answer.
    static let connectTimeout: Duration = .seconds(10)

    /// Sends `request` to the device at `endpoint` whose certificate must hash to `fingerprint`
    /// (any case), and reads its answer, at most `answerLimit` bytes of body, all within `timeout`
    /// (connected within `connectTimeout`).
    /// - Throws: `LocalSendError`.
    func send(
        _ request: HTTPRequest, to endpoint: Endpoint, expecting fingerprint: String, answerLimit: Int,
        timeout: Duration
    ) async throws(LocalSendError) -> HTTPResponseReader.Response {
        let deadline = ContinuousClock.now + timeout
        do {
            let connected = ContinuousClock.now + min(timeout, Self.connectTimeout)
            let socket = try await StreamConnector.tcp(to: endpoint, timeout: connected - .now)
            let connection = try await TLSConnection.handshake(
                over: socket, context: tls, as: .client, timeout: connected - .now)
            guard let shown = connection.peerCertificate, shown.isClaimed(by: fingerprint) else {
                throw LocalSendError.impostor(
                    "\(endpoint) showed the certificate \(connection.peerCertificate?.short ?? "none"), "
                        + "not the one its announcement claims")
            }
            try await connection.write(request.serialized(host: endpoint.description), timeout: deadline - .now)
            var reader = HTTPResponseReader(limits: .init(bodyBytes: answerLimit))
            while true {
                var action = HTTPResponseReader.Action.needMore
                let count = try await connection.read(maximumCount: 65_536, timeout: deadline - .now) {
                    action = reader.read($0)
                }
                if count == 0 { action = reader.end() }
                switch action {
                case .needMore: continue
                case .response(let response): return response
                case .fail(let reason): throw LocalSendError.unreadable("\(endpoint): \(reason)")
                }
            }
        } catch let error as LocalSendError {
            throw error
        } catch {
            throw LocalSendError.unreachable("\(endpoint): \(error)")
        }
    }
}

/// What went wrong with a LocalSend device.
enum LocalSendError: Error, Sendable, CustomStringConvertible {
    /// It could not be reached, or the connection failed.
    case unreachable(String)
    /// It showed a certificate other than the one it claims.
    case impostor(String)
    /// Its answer is not HTTP, or not the JSON it should be.
    case unreadable(String)
    /// It answered with a status that refuses.
    case refused(status: Int, String)

    var description: String {
        switch self {
        case .unreachable(let text), .impostor(let text), .unreadable(let text): text
        case .refused(let status, let text): "\(text) (HTTP \(status))"
        }
    }
}

extension Fingerprint {
    /// Whether this is the fingerprint `text` claims (64 hex digits, in either case).
    func isClaimed(by text: String) -> Bool { Fingerprint(hex: text) == self }
}
