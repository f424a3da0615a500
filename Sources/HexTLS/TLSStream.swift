import COpenSSL
import FoundationEssentials
import HexNet

/// A TLS connection with a hexd peer: TLS 1.3, both sides showing a certificate, the other
/// side's Ed25519 key proven, and a session kept to resume the next connection to the same peer.
///
/// Used by one task at a time, like `StreamConnection`, which it serves as its `ByteStream`.
public final class TLSStream: ByteStream {
    public typealias Role = TLSConnection.Role

    private let connection: TLSConnection
    /// The other side's fingerprint, proven by the handshake.
    public let peer: Fingerprint
    /// The other side's key, proven by the handshake: the device ID it may speak for.
    public let peerKey: DeviceKey

    private init(connection: TLSConnection, peer: Fingerprint, peerKey: DeviceKey) {
        self.connection = connection
        self.peer = peer
        self.peerKey = peerKey
    }

    public var channel: any ByteChannel { connection.channel }
    /// Whether the handshake resumed a session of an earlier connection between the same two keys
    /// (see `TLSSessions`) rather than exchanging certificates.
    public var isResumed: Bool { connection.isResumed }

    /// Runs the handshake over `socket`, within `timeout` in all.
    /// - Parameter peerID: a client's: the device ID the other side is expected to prove. A session
    ///   kept from an earlier connection to it is resumed, and the ticket this connection gets is
    ///   kept for the next. Without it, nothing is resumed or kept.
    /// - Parameter keepingSession: a server's: whether the session stays in the server's cache for
    ///   the client to resume (its ticket is then an id); otherwise the ticket carries the session,
    ///   encrypted, and the server keeps nothing.
    /// - Throws: `TLSError` when the handshake fails or the other side shows no certificate (or
    ///   one without an Ed25519 key),
    ///   `SocketError` (a timeout, a closed connection).
    public static func handshake(
        over socket: Socket, context: TLSContext, as role: Role, expecting peerID: UUID? = nil,
        keepingSession: Bool = true, timeout: Duration
    ) async throws -> TLSStream {
        let engine = try TLSConnection.Engine(
            context: role == .client ? context.clientContext : context.serverContext, role: role,
            sessions: context.sessions, peerID: role == .client ? peerID : nil)
        if role == .server && !keepingSession { engine.keepNoSession() }
        let connection = try await TLSConnection.handshake(over: socket, engine: engine, timeout: timeout)
        guard let peer = connection.peerCertificate, let certificate = connection.copyPeerCertificate() else {
            throw TLSError("complete the TLS handshake", reason: "the other side showed no certificate")
        }
        defer { X509_free(certificate) }
        guard let peerKey = DeviceKey.of(certificate: certificate) else {
            throw TLSError("complete the TLS handshake", reason: "the other side's certificate holds no Ed25519 key")
        }
        return TLSStream(connection: connection, peer: peer, peerKey: peerKey)
    }

    public func read(maximumCount: Int, timeout: Duration?, _ take: (UnsafeBufferPointer<UInt8>) -> Void) async throws
        -> Int
    {
        try await connection.read(maximumCount: maximumCount, timeout: timeout, take)
    }

    public func write(_ bytes: [UInt8], timeout: Duration?) async throws {
        try await connection.write(bytes, timeout: timeout)
    }
}
