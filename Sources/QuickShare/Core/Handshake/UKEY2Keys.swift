/// Which end of a connection this side is: the one that connected (client) or the receiver (server).
public enum ConnectionRole: Sendable {
    case client
    case server
}

/// The keys UKEY2 agrees (google/ukey2 `ukey2_handshake.cc`, `d2d_connection_context_v1.cc`; NearDrop
/// `NearbyConnection.finalizeKeyExchange`): from the ECDH secret, an auth key (shown to people as a
/// PIN) and a next key, from which each direction's AES and HMAC keys come.
public struct UKEY2Keys: Sendable, Equatable {
    public let authKey: [UInt8]
    public let nextKey: [UInt8]

    /// - Parameters:
    ///   - sharedSecret: the ECDH point's x coordinate, 32 bytes with leading zeros kept (the reference's
    ///     form; NearDrop hashes it without them, which differs once in 256 handshakes).
    ///   - clientInit: the `UKEY2Message` bytes of the client's init, exactly as they travelled.
    ///   - serverInit: the same of the server's init.
    public init(sharedSecret: [UInt8], clientInit: [UInt8], serverInit: [UInt8]) {
        let derived = Digest.sha256(sharedSecret)
        let transcript = clientInit + serverInit
        authKey = Digest.hkdfSHA256(key: derived, salt: Array("UKEY2 v1 auth".utf8), info: transcript, count: 32)
        nextKey = Digest.hkdfSHA256(key: derived, salt: Array("UKEY2 v1 next".utf8), info: transcript, count: 32)
    }

    /// The four digits both sides show, so a person can see they reached the device they meant
    /// (NearDrop `pinCodeFromAuthKey`, rquickshare `to_four_digit_string`): each byte of the auth key,
    /// signed, weighted by powers of 31, modulo 9973 with the remainder's sign (C's and Swift's `%`).
    public var pin: String { Self.pin(authKey: authKey) }

    static func pin(authKey: [UInt8]) -> String {
        var hash = 0
        var multiplier = 1
        for byte in authKey {
            hash = (hash + Int(Int8(bitPattern: byte)) * multiplier) % 9973
            multiplier = multiplier * 31 % 9973
        }
        let digits = String(abs(hash))
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The keys this side seals with and the keys it opens the other side's messages with.
    public func channelKeys(as role: ConnectionRole) -> ChannelKeys {
        let client = Self.directionKeys(next: nextKey, info: "client")
        let server = Self.directionKeys(next: nextKey, info: "server")
        switch role {
        case .client: return ChannelKeys(sealing: client, opening: server)
        case .server: return ChannelKeys(sealing: server, opening: client)
        }
    }

    private static func directionKeys(next: [UInt8], info: String) -> ChannelKeys.Direction {
        let deviceToDevice = Digest.hkdfSHA256(
            key: next, salt: Digest.sha256(Array("D2D".utf8)), info: Array(info.utf8), count: 32)
        let salt = Digest.sha256(Array("SecureMessage".utf8))
        return ChannelKeys.Direction(
            encryption: Digest.hkdfSHA256(key: deviceToDevice, salt: salt, info: Array("ENC:2".utf8), count: 32),
            signing: Digest.hkdfSHA256(key: deviceToDevice, salt: salt, info: Array("SIG:1".utf8), count: 32))
    }
}

/// One side's keys for the secure channel.
public struct ChannelKeys: Sendable, Equatable {
    public struct Direction: Sendable, Equatable {
        public let encryption: [UInt8]
        public let signing: [UInt8]
    }

    public let sealing: Direction
    public let opening: Direction
}
