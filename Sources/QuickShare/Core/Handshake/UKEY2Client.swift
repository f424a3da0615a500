/// The connecting side of UKEY2 as a pure machine: its `ClientInit` (committing to its
/// `ClientFinished`), then, given the server's answer, the `ClientFinished` to send and the keys.
public struct UKEY2Client: Sendable {
    /// The `ClientInit` frame to send first.
    public let clientInit: [UInt8]
    private let clientFinished: [UInt8]
    private let keyPair: P256KeyPair
    private var answered = false

    /// - Parameters:
    ///   - keyPair: this side's key for the handshake, used once.
    ///   - random: 32 random bytes for the `ClientInit`.
    public init(keyPair: P256KeyPair, random: [UInt8]) {
        self.keyPair = keyPair
        clientFinished =
            UKEY2Message(
                kind: .clientFinish,
                data: UKEY2ClientFinished(publicKey: GenericPublicKey(x: keyPair.x, y: keyPair.y).protobuf).protobuf
            ).protobuf
        clientInit =
            UKEY2Message(
                kind: .clientInit,
                data: UKEY2ClientInit(
                    version: 1, random: random,
                    commitments: [(UKEY2ClientInit.p256SHA512, Digest.sha512(clientFinished))],
                    nextProtocol: UKEY2ClientInit.nextProtocol
                ).protobuf
            ).protobuf
    }

    /// Reads the server's `ServerInit` frame; gives the `ClientFinished` frame to send and the keys.
    public mutating func finish(answering frame: [UInt8]) throws(UKEY2Failure) -> (frame: [UInt8], keys: UKEY2Keys) {
        guard !answered else { throw UKEY2Failure("a second ServerInit", alert: .incorrectMessage) }
        answered = true
        let serverInit: UKEY2ServerInit
        do {
            let message = try UKEY2Message(protobuf: frame)
            guard message.kind == .serverInit else {
                throw UKEY2Failure("the server's UKEY2 answer is not a ServerInit", alert: .badMessageType)
            }
            serverInit = try UKEY2ServerInit(protobuf: message.data)
        } catch let failure as UKEY2Failure {
            throw failure
        } catch {
            throw UKEY2Failure("the ServerInit cannot be read: \(error)", alert: .badMessageData)
        }
        guard serverInit.version == 1 else {
            throw UKEY2Failure("the ServerInit is of version \(serverInit.version)", alert: .badVersion)
        }
        guard serverInit.random.count == 32 else {
            throw UKEY2Failure("the ServerInit's random is not 32 bytes", alert: .badRandom)
        }
        guard serverInit.cipher == UKEY2ClientInit.p256SHA512 else {
            throw UKEY2Failure("the ServerInit chose cipher \(serverInit.cipher)", alert: .badHandshakeCipher)
        }
        do {
            let peerKey = try GenericPublicKey(protobuf: serverInit.publicKey)
            let secret = try keyPair.sharedSecret(peerX: peerKey.x, peerY: peerKey.y)
            return (clientFinished, UKEY2Keys(sharedSecret: secret, clientInit: clientInit, serverInit: frame))
        } catch {
            throw UKEY2Failure("the ServerInit's public key: \(error)", alert: .badPublicKey)
        }
    }
}
