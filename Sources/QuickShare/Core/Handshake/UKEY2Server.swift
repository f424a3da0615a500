/// The receiver's side of UKEY2 as a pure machine: frames in, the frame to answer and, once the
/// client has finished, the agreed keys out. The key pair and random bytes are given, so tests can
/// run it against vectors; every check follows google/ukey2's `HandleClientInitMessage` and
/// `HandleClientFinishedMessage`, with the alert it would send.
public struct UKEY2Server: Sendable {
    private enum State: Sendable {
        case awaitingClientInit
        case awaitingClientFinish(clientInit: [UInt8], serverInit: [UInt8], commitment: [UInt8])
        case finished
    }

    private let keyPair: P256KeyPair
    private let random: [UInt8]
    private var state = State.awaitingClientInit

    /// - Parameters:
    ///   - keyPair: this side's key for the handshake, used once.
    ///   - random: 32 random bytes for the `ServerInit`.
    public init(keyPair: P256KeyPair, random: [UInt8]) {
        self.keyPair = keyPair
        self.random = random
    }

    /// Reads the client's `ClientInit` frame and gives the `ServerInit` frame to send.
    public mutating func serverInit(answering frame: [UInt8]) throws(UKEY2Failure) -> [UInt8] {
        guard case .awaitingClientInit = state else {
            throw UKEY2Failure("a second ClientInit", alert: .incorrectMessage)
        }
        state = .finished
        let message: UKEY2Message
        do { message = try UKEY2Message(protobuf: frame) } catch {
            throw UKEY2Failure("the ClientInit is not a UKEY2 message: \(error)", alert: .badMessage)
        }
        guard message.kind == .clientInit else {
            throw UKEY2Failure("the first UKEY2 message is not a ClientInit", alert: .badMessageType)
        }
        let clientInit: UKEY2ClientInit
        do { clientInit = try UKEY2ClientInit(protobuf: message.data) } catch {
            throw UKEY2Failure("the ClientInit cannot be read: \(error)", alert: .badMessageData)
        }
        guard clientInit.version == 1 else {
            throw UKEY2Failure("the ClientInit is of version \(clientInit.version)", alert: .badVersion)
        }
        guard clientInit.random.count == 32 else {
            throw UKEY2Failure("the ClientInit's random is not 32 bytes", alert: .badRandom)
        }
        guard let commitment = clientInit.p256Commitment, commitment.count == 64 else {
            throw UKEY2Failure("the ClientInit offers no P-256 with SHA-512", alert: .badHandshakeCipher)
        }
        guard clientInit.nextProtocol == UKEY2ClientInit.nextProtocol else {
            throw UKEY2Failure("the ClientInit asks for \(clientInit.nextProtocol)", alert: .badNextProtocol)
        }
        let serverInit = UKEY2Message(
            kind: .serverInit,
            data: UKEY2ServerInit(
                version: 1, random: random, cipher: UKEY2ClientInit.p256SHA512,
                publicKey: GenericPublicKey(x: keyPair.x, y: keyPair.y).protobuf
            ).protobuf
        ).protobuf
        state = .awaitingClientFinish(clientInit: frame, serverInit: serverInit, commitment: commitment)
        return serverInit
    }

    /// Reads the client's `ClientFinished` frame, checks it against the commitment and agrees the keys.
    public mutating func keys(finishing frame: [UInt8]) throws(UKEY2Failure) -> UKEY2Keys {
        guard case .awaitingClientFinish(let clientInit, let serverInit, let commitment) = state else {
            throw UKEY2Failure("a ClientFinished out of turn", alert: .incorrectMessage)
        }
        state = .finished
        // The commitment covers the whole frame, so nothing in it can change after the ServerInit.
        guard Digest.constantTimeEqual(Digest.sha512(frame), commitment) else {
            throw UKEY2Failure("the ClientFinished does not match the ClientInit's commitment", alert: nil)
        }
        let peerKey: GenericPublicKey
        do {
            let message = try UKEY2Message(protobuf: frame)
            guard message.kind == .clientFinish else {
                throw UKEY2Failure("the third UKEY2 message is not a ClientFinished", alert: .badMessageType)
            }
            peerKey = try GenericPublicKey(protobuf: try UKEY2ClientFinished(protobuf: message.data).publicKey)
        } catch let failure as UKEY2Failure {
            throw failure
        } catch {
            throw UKEY2Failure("the ClientFinished's public key cannot be read: \(error)", alert: .badPublicKey)
        }
        do {
            let secret = try keyPair.sharedSecret(peerX: peerKey.x, peerY: peerKey.y)
            return UKEY2Keys(sharedSecret: secret, clientInit: clientInit, serverInit: serverInit)
        } catch {
            throw UKEY2Failure(error.description, alert: .badPublicKey)
        }
    }
}
