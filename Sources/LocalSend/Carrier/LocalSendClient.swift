import HexCarrier
import HexKit
import HexNet
import HexTLS
import HexWeb

/// hexd's requests to LocalSend devices: one HTTPS request per connection, hexd's persona shown
/// as the client certificate (LocalSend 1.18 requires one), and the device's certificate checked
/// against the fingerprint it claims before a byte is written; or, to a device whose encryption is
/// off, one plain HTTP request, which proves nothing and anyone on the LAN can read.
struct LocalSendClient: Sendable {
    /// How a device's API is reached.
    enum Channel: Sendable {
        /// TLS, the device's certificate hashing to this fingerprint (any case).
        case pinned(String)
        /// Plain HTTP: the device's encryption is off.
        case plain
    }

    let tls: ForeignTLSContext
    /// Opens a connection to a device: TCP, or a test's memory.
    let connect: @Sendable (Endpoint, Duration) async throws -> any ByteChannel
    /// The longest the connection and its handshake may take, whatever the request's timeout: a
    /// device that is there answers them at once, even when its person takes minutes to answer.
    let connectTimeout: Duration

    /// Sends `request` to the device at `endpoint` over `channel`, and reads its answer, at most
    /// `answerLimit` bytes of body, all within `timeout` (connected within `connectTimeout`).
    /// - Throws: `LocalSendError`.
    func send(
        _ request: HTTPRequest, to endpoint: Endpoint, over channel: Channel, answerLimit: Int, timeout: Duration
    ) async throws(LocalSendError) -> HTTPResponseReader.Response {
        let deadline = ContinuousClock.now + timeout
        let connection = try await connect(to: endpoint, over: channel, until: deadline)
        return try await exchange(on: connection, with: endpoint, until: deadline) {
            try await connection.write(request.serialized(host: endpoint.description), timeout: deadline - .now)
            return answerLimit
        }
    }

    /// Uploads the file `file` of `size` bytes as the body of `request` (its head written, then
    /// the bytes as they are read), telling `progress` the bytes written at most every 200 ms,
    /// and reads the answer, all by `deadline`.
    /// - Throws: `LocalSendError`.
    func upload(
        _ file: DiskFile, size: Int64, as request: HTTPRequest, to endpoint: Endpoint, over channel: Channel,
        until deadline: ContinuousClock.Instant, progress: (Int64) async -> Void
    ) async throws(LocalSendError) -> HTTPResponseReader.Response {
        let connection = try await connect(to: endpoint, over: channel, until: deadline)
        return try await exchange(on: connection, with: endpoint, until: deadline) {
            try await connection.write(
                request.serializedHead(host: endpoint.description, bodyLength: Int(clamping: size)),
                timeout: deadline - .now)
            try await FileStreaming.write(file, size: size, to: connection, until: deadline, progress: progress)
            return 4_096
        }
    }

    /// A connection to `endpoint` over `channel`: over TLS, the certificate hashes to the
    /// fingerprint the channel names.
    private func connect(
        to endpoint: Endpoint, over channel: Channel, until deadline: ContinuousClock.Instant
    ) async throws(LocalSendError) -> any ByteStream {
        do {
            let connected = min(deadline, ContinuousClock.now + connectTimeout)
            let plain = try await connect(endpoint, connected - .now)
            guard case .pinned(let fingerprint) = channel else { return plain }
            let connection = try await TLSConnection.handshake(
                over: plain, context: tls, as: .client, timeout: connected - .now)
            guard let shown = connection.peerCertificate, shown.isClaimed(by: fingerprint) else {
                throw LocalSendError.impostor(
                    "\(endpoint) showed the certificate \(connection.peerCertificate?.short ?? "none"), "
                        + "not the one its announcement claims")
            }
            return connection
        } catch let error as LocalSendError {
            throw error
        } catch {
            throw .unreachable("\(endpoint): \(error)")
        }
    }

    /// Writes a request on `connection` (`write`, which returns the most body bytes of the answer
    /// to read), then reads the answer.
    private func exchange(
        on connection: any ByteStream, with endpoint: Endpoint, until deadline: ContinuousClock.Instant,
        write: () async throws -> Int
    ) async throws(LocalSendError) -> HTTPResponseReader.Response {
        var written = false
        do {
            var reader = HTTPResponseReader(limits: .init(bodyBytes: try await write()))
            written = true
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
        } catch let error where written {
            // Taken whole, the request may have been acted on (a message shown): the caller says.
            throw .unanswered("\(endpoint) took the request and gave no answer (\(error))")
        } catch {
            throw .unreachable("\(endpoint): \(error)")
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
    /// It took the whole request but gave no answer: none in time, or its connection failed
    /// (its person may have seen it).
    case unanswered(String)

    var description: String {
        switch self {
        case .unreachable(let text), .impostor(let text), .unreadable(let text), .unanswered(let text): text
        case .refused(let status, let text): "\(text) (HTTP \(status))"
        }
    }
}

extension Fingerprint {
    /// Whether this is the fingerprint `text` claims (64 hex digits, in either case).
    func isClaimed(by text: String) -> Bool { Fingerprint(hex: text) == self }
}
