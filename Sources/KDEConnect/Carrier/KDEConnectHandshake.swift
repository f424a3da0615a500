import HexCarrier
import HexKit
import HexNet
import HexTLS
import KDEConnectCore

/// The start of a KDE Connect link, either way (kdeconnect-kde `core/backends/lan/lanlinkprovider.cpp`):
/// the side that dials writes its identity in plain text and then takes the TLS *server*'s role;
/// the side that accepts reads that identity and is the TLS client. Both show their certificate.
/// From protocol 8 (when both sides speak it, as their plain identities say) each side then writes its
/// identity again inside TLS and reads the other's, which must name the same device and version.
/// Whichever way, the certificate's common name must be the device ID: that is what proves it.
enum KDEConnectHandshake {
    /// A link whose TLS handshake proved the device.
    struct Link {
        /// Lines of the link: packets, each within `KDEConnectPacket.maximumSize`.
        let lines: StreamConnection
        let connection: TLSConnection
        /// The device as it describes itself (inside TLS from protocol 8).
        let identity: KDEConnectIdentity
        /// The version both speak: 7 or 8.
        let version: Int
        /// Its certificate's SHA-256, and its public key (SubjectPublicKeyInfo, for the
        /// verification code).
        let certificate: Fingerprint
        let publicKey: [UInt8]
    }

    /// Why a link did not start.
    enum Failure: Error, CustomStringConvertible {
        case identity(String)
        case closed
        case mismatch(String)

        var description: String {
            switch self {
            case .identity(let reason): "its identity: \(reason)"
            case .closed: "it closed the connection"
            case .mismatch(let reason): reason
            }
        }
    }

    /// The deadline of an accepted connection's identity line and TLS handshake together (the
    /// apps give 1 s; a LAN needs a few milliseconds).
    static let acceptDeadline: Duration = .seconds(2)
    /// The deadline of a dial's TLS handshake and protocol 8's identities.
    static let dialDeadline: Duration = .seconds(10)

    /// How long the start of a link may take each way: a LAN's, or a test's on a loaded machine.
    struct Deadlines: Sendable {
        var accept = KDEConnectHandshake.acceptDeadline
        var dial = KDEConnectHandshake.dialDeadline

        init() {}

        /// Both ways within `time`.
        init(both time: Duration) { (accept, dial) = (time, time) }
    }

    /// hexd dials a device it heard: writes its identity (naming the device it is meant for),
    /// then answers the device's TLS handshake.
    /// - Parameters:
    ///   - own: hexd's identity, without its TCP port.
    ///   - heard: the device's identity from its broadcast.
    ///   - within: the deadline of its TLS handshake and protocol 8's identities (`Deadlines.dial`).
    static func dial(
        _ channel: any ByteChannel, own: KDEConnectIdentity, heard: KDEConnectIdentity, tls: ForeignTLSContext,
        now: Int64, within: Duration
    ) async throws -> Link {
        let deadline = ContinuousClock.now + within
        var introduction = own
        introduction.targetDeviceID = heard.deviceID
        introduction.targetProtocolVersion = heard.protocolVersion
        try await channel.write(introduction.encoded(id: now), timeout: within)
        let connection = try await TLSConnection.handshake(
            over: channel, context: tls, as: .server, timeout: deadline - .now)
        return try await finish(connection, own: own, plain: heard, deadline: deadline, now: now)
    }

    /// A device dialed hexd: reads its identity (at most 8 KiB, nothing after it), then starts TLS
    /// as the client, all within `within`. An identity `isHexd` tells is another hexd's persona is
    /// refused before TLS.
    static func accept(
        _ channel: any ByteChannel, own: KDEConnectIdentity, tls: ForeignTLSContext, now: Int64,
        within: Duration = acceptDeadline, refusing isHexd: (KDEConnectIdentity) -> Bool = { _ in false }
    ) async throws -> Link {
        let deadline = ContinuousClock.now + within
        let line = try await readIdentityLine(from: channel, deadline: deadline)
        let plain: KDEConnectIdentity
        do {
            plain = try KDEConnectIdentity(
                try KDEConnectPacket.decode(line, maximumSize: KDEConnectPacket.maximumIdentitySize),
                broadcast: false)
        } catch {
            throw Failure.identity("\(error)")
        }
        // Devices since 2026 say whom they meant; one that meant another device is not linked.
        if let target = plain.targetDeviceID, target != own.deviceID {
            throw Failure.mismatch("it meant device \(target), not this one")
        }
        // Another hexd's persona costs no handshake: that daemon is met by hexd's own protocol.
        guard !isHexd(plain) else { throw Failure.mismatch("it is another hexd's persona") }
        let connection = try await TLSConnection.handshake(
            over: channel, context: tls, as: .client, timeout: max(deadline - .now, .milliseconds(1)))
        return try await finish(connection, own: own, plain: plain, deadline: deadline, now: now)
    }

    /// Protocol 8's identities inside TLS, and the common name's check.
    private static func finish(
        _ connection: TLSConnection, own: KDEConnectIdentity, plain: KDEConnectIdentity,
        deadline: ContinuousClock.Instant, now: Int64
    ) async throws -> Link {
        let lines = StreamConnection(stream: connection, maximumLineLength: KDEConnectPacket.maximumSize)
        var identity = plain
        // Protocol 7 writes nothing more: a client's Finished goes now, not with its first packet.
        try await connection.flush(timeout: max(deadline - .now, .milliseconds(1)))
        // Both must speak 8: the apps of protocol 8 send it when the other side's plain identity
        // says 8, and 22.12 (protocol 7) neither sends nor expects it.
        if own.versionSpoken(with: plain) >= 8 {
            try await lines.writeLine(own.encoded(id: now).dropLast(), timeout: deadline - .now)
            guard case .line(let line)? = try await lines.readLine(timeout: max(deadline - .now, .milliseconds(1)))
            else { throw Failure.closed }
            guard line.count <= KDEConnectPacket.maximumIdentitySize,
                let inside = try? KDEConnectIdentity(KDEConnectPacket.decode(line), broadcast: false)
            else { throw Failure.identity("its identity inside TLS is not one") }
            guard inside.deviceID == plain.deviceID, inside.protocolVersion == plain.protocolVersion else {
                throw Failure.mismatch("its identity inside TLS names another device or version")
            }
            identity = inside
        }
        let name = connection.peerCommonName
        guard name == identity.deviceID else {
            let named = name.map { "\"\($0.clipped(toUTF8: 64))\"" } ?? "no one"
            throw Failure.mismatch("its certificate names \(named), not its device ID")
        }
        guard let certificate = connection.peerCertificate, let key = connection.peerPublicKeyDER else {
            throw Failure.mismatch("it showed no certificate")
        }
        return Link(
            lines: lines, connection: connection, identity: identity, version: own.versionSpoken(with: identity),
            certificate: certificate, publicKey: key)
    }

    /// The first line of an accepted connection: the device's identity, in plain text.
    private static func readIdentityLine(from channel: any ByteChannel, deadline: ContinuousClock.Instant) async throws
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        let cap = KDEConnectPacket.maximumIdentitySize + 1
        while true {
            let read = try await channel.read(maximumCount: cap - bytes.count, timeout: max(deadline - .now, .zero)) {
                bytes.append(contentsOf: $0)
            }
            guard read > 0 else { throw Failure.closed }
            if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                // The device waits for hexd's TLS handshake: nothing may follow its identity.
                guard end == bytes.count - 1 else {
                    throw Failure.identity("it sent more than its identity before TLS")
                }
                return Array(bytes[..<end])
            }
            guard bytes.count < cap else { throw Failure.identity("longer than 8 KiB") }
        }
    }
}
