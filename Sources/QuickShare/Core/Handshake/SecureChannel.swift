/// The channel after UKEY2: each offline frame in a `DeviceToDeviceMessage` with the next sequence
/// number, AES-256-CBC encrypted, in a `SecureMessage` signed with HMAC-SHA256. Sequence numbers
/// start at 1 in each direction and a message out of turn ends the connection, as NearDrop checks
/// (`decryptAndProcessReceivedSecureMessage`): a replayed or dropped frame cannot pass.
public struct SecureChannel: Sendable {
    private let keys: ChannelKeys
    private var sent: Int32 = 0
    private var opened: Int32 = 0

    public init(keys: ChannelKeys) {
        self.keys = keys
    }

    /// The `SecureMessage` bytes carrying `frame`, with a fresh random IV.
    public mutating func seal(_ frame: [UInt8]) throws(QuickShareError) -> [UInt8] {
        try seal(frame, iv: try SecureRandom.bytes(16))
    }

    /// The same with a given IV, for tests against vectors computed elsewhere.
    public mutating func seal(_ frame: [UInt8], iv: [UInt8]) throws(QuickShareError) -> [UInt8] {
        guard sent < Int32.max else { throw QuickShareError("the channel has sent all its sequence numbers") }
        sent += 1
        let inner = DeviceToDeviceMessage(message: frame[...], sequenceNumber: sent).protobuf
        let body = try AESCBC.encrypt(inner[...], key: keys.sealing.encryption, iv: iv)
        let headerAndBody = SecureHeaderAndBody(iv: iv, body: body[...]).protobuf
        let signature = Digest.hmacSHA256(key: keys.sealing.signing, headerAndBody)
        guard !signature.isEmpty else { throw QuickShareError("libcrypto could not sign a secure message") }
        return SecureMessage(headerAndBody: headerAndBody[...], signature: signature).protobuf
    }

    /// The offline frame bytes inside a `SecureMessage` from the other side.
    ///
    /// - Throws: `QuickShareError` when the signature does not verify (checked before anything is
    ///   decrypted), the schemes are not the channel's, the body does not decrypt, or the sequence
    ///   number is not the next one.
    public mutating func open(_ bytes: [UInt8]) throws(QuickShareError) -> ArraySlice<UInt8> {
        let message = try SecureMessage.read(bytes, as: "a secure message")
        let expected = Digest.hmacSHA256(key: keys.opening.signing, message.headerAndBody)
        guard Digest.constantTimeEqual(expected, message.signature) else {
            throw QuickShareError("a secure message's signature does not verify")
        }
        let headerAndBody = try SecureHeaderAndBody.read(message.headerAndBody, as: "a secure message's header")
        guard headerAndBody.encryptionScheme == SecureHeaderAndBody.aes256CBC,
            headerAndBody.signatureScheme == SecureHeaderAndBody.hmacSHA256
        else { throw QuickShareError("a secure message names schemes other than AES-256-CBC and HMAC-SHA256") }
        let plain = try AESCBC.decrypt(headerAndBody.body, key: keys.opening.encryption, iv: headerAndBody.iv)
        let inner = try DeviceToDeviceMessage.read(plain, as: "a device-to-device message")
        guard opened < Int32.max, inner.sequenceNumber == opened + 1 else {
            throw QuickShareError("a secure message has sequence number \(inner.sequenceNumber), not \(opened + 1)")
        }
        opened += 1
        return inner.message
    }
}

extension SecureChannel? {
    /// The offline frame inside a `SecureMessage` from the other side.
    /// - Throws: `QuickShareError` when there is no channel yet, or as `SecureChannel.open` does, or
    ///   when what it holds is no offline frame.
    mutating func open(_ bytes: [UInt8]) throws(QuickShareError) -> OfflineFrame {
        guard var channel = self else { throw QuickShareError("a secure message before the channel is secure") }
        let opened = try channel.open(bytes)
        self = channel
        return try OfflineFrame.read(opened, as: "an offline frame")
    }

    /// `frames` sealed in order; nil when there is no channel yet or libcrypto cannot seal.
    mutating func seal(_ frames: [OfflineFrame]) -> [[UInt8]]? {
        guard var channel = self else { return nil }
        var sealed: [[UInt8]] = []
        for frame in frames {
            guard let bytes = try? channel.seal(frame.protobuf) else { return nil }
            sealed.append(bytes)
        }
        self = channel
        return sealed
    }
}

extension OfflineFrame {
    /// `bytes` as the BYTES payload `id`, as both ends send one: a chunk holding them, then an empty
    /// chunk with the last-chunk flag at their end.
    static func bytesPayload(_ bytes: [UInt8], id: Int64) -> [OfflineFrame] {
        let size = Int64(bytes.count)
        return [
            .payloadTransfer(.init(payloadID: id, kind: .bytes, totalSize: size, offset: 0, body: bytes[...])),
            .payloadTransfer(
                .init(
                    payloadID: id, kind: .bytes, totalSize: size, flags: PayloadTransfer.lastChunkFlag, offset: size,
                    body: [])),
        ]
    }
}
