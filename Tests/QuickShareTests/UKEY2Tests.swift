import Testing

@testable import QuickShareCore

@Suite(.timeLimit(.minutes(1)))
struct UKEY2Tests {
    let vectors = Vectors.file

    private func pairs() throws -> (client: P256KeyPair, server: P256KeyPair) {
        (
            try P256KeyPair(privateScalar: vectors.bytes("set1_client_private")),
            try P256KeyPair(privateScalar: vectors.bytes("set1_server_private"))
        )
    }

    @Test func publicKeysAreTheVectorsPointsAndTravelInJavasForm() throws {
        let (client, server) = try pairs()
        #expect(client.x == vectors.bytes("set1_client_public_x"))
        #expect(client.y == vectors.bytes("set1_client_public_y"))
        #expect(server.x == vectors.bytes("set1_server_public_x"))
        #expect(server.y == vectors.bytes("set1_server_public_y"))
        let written = GenericPublicKey(x: client.x, y: client.y).protobuf
        #expect(written == vectors.bytes("set1_client_generic_public_key"))
        // google/ukey2's C++ always writes a sign byte; both forms read as the same point.
        let cppForm = try GenericPublicKey(protobuf: vectors.bytes("set1_client_generic_public_key_cpp_form"))
        #expect(cppForm == GenericPublicKey(x: client.x, y: client.y))
    }

    @Test func bothSidesAgreeTheVectorsKeysAndPin() throws {
        let (clientKey, serverKey) = try pairs()
        var client = UKEY2Client(keyPair: clientKey, random: vectors.bytes("set1_client_random"))
        var server = UKEY2Server(keyPair: serverKey, random: vectors.bytes("set1_server_random"))
        #expect(client.clientInit == vectors.bytes("set1_client_init"))
        let serverInit = try server.serverInit(answering: client.clientInit)
        #expect(serverInit == vectors.bytes("set1_server_init"))
        let (finish, clientKeys) = try client.finish(answering: serverInit)
        #expect(finish == vectors.bytes("set1_client_finish"))
        let serverKeys = try server.keys(finishing: finish)
        #expect(clientKeys == serverKeys)
        #expect(serverKeys.authKey == vectors.bytes("set1_auth_key"))
        #expect(serverKeys.nextKey == vectors.bytes("set1_next_key"))
        #expect(serverKeys.pin == vectors.text("set1_pin"))
        let channel = serverKeys.channelKeys(as: .client)
        #expect(channel.sealing.encryption == vectors.bytes("set1_client_enc_key"))
        #expect(channel.sealing.signing == vectors.bytes("set1_client_hmac_key"))
        #expect(channel.opening.encryption == vectors.bytes("set1_server_enc_key"))
        #expect(channel.opening.signing == vectors.bytes("set1_server_hmac_key"))
        #expect(serverKeys.channelKeys(as: .server).sealing == channel.opening)
    }

    @Test func aSharedSecretWithALeadingZeroIsHashedWhole() throws {
        let client = try P256KeyPair(privateScalar: vectors.bytes("set2_client_private"))
        let server = try P256KeyPair(privateScalar: vectors.bytes("set2_server_private"))
        let secret = try client.sharedSecret(peerX: server.x, peerY: server.y)
        #expect(secret == vectors.bytes("set2_shared_x"))
        #expect(secret.first == 0)
        #expect(Digest.sha256(secret) == vectors.bytes("set2_derived_secret"))
    }

    @Test func aPinWhoseHashIsNegativeShowsItsMagnitude() {
        #expect(UKEY2Keys.pin(authKey: vectors.bytes("set3_auth_key")) == vectors.text("set3_pin"))
        #expect(vectors.text("set3_hash_before_abs").hasPrefix("-"))
    }

    @Test func aClientFinishedThatBreaksItsCommitmentIsRefused() throws {
        let (clientKey, serverKey) = try pairs()
        var client = UKEY2Client(keyPair: clientKey, random: vectors.bytes("set1_client_random"))
        var server = UKEY2Server(keyPair: serverKey, random: vectors.bytes("set1_server_random"))
        let serverInit = try server.serverInit(answering: client.clientInit)
        // Another key, validly encoded, in place of the committed one.
        let other = try P256KeyPair()
        let swapped = UKEY2Message(
            kind: .clientFinish,
            data: UKEY2ClientFinished(publicKey: GenericPublicKey(x: other.x, y: other.y).protobuf).protobuf
        ).protobuf
        #expect(throws: UKEY2Failure.self) { try server.keys(finishing: swapped) }
        #expect(throws: UKEY2Failure.self) { try client.finish(answering: serverInit + [0]) }
    }

    @Test func aClientInitThatIsNotQuickSharesIsAnsweredWithTheReferencesAlert() throws {
        func alert(for clientInit: UKEY2ClientInit) throws -> [UInt8]? {
            var server = UKEY2Server(keyPair: try P256KeyPair(), random: [UInt8](repeating: 1, count: 32))
            let frame = UKEY2Message(kind: .clientInit, data: clientInit.protobuf).protobuf
            do {
                _ = try server.serverInit(answering: frame)
                return nil
            } catch {
                return error.alert
            }
        }
        let good = UKEY2ClientInit(
            version: 1, random: [UInt8](repeating: 2, count: 32),
            commitments: [(UKEY2ClientInit.p256SHA512, [UInt8](repeating: 3, count: 64))],
            nextProtocol: UKEY2ClientInit.nextProtocol)
        #expect(try alert(for: good) == nil)
        var wrongVersion = good
        wrongVersion.version = 2
        #expect(try alert(for: wrongVersion) == Self.alert(.badVersion))
        var curve25519Only = good
        curve25519Only.commitments = [(200, [UInt8](repeating: 3, count: 64))]
        #expect(try alert(for: curve25519Only) == Self.alert(.badHandshakeCipher))
        var otherProtocol = good
        otherProtocol.nextProtocol = "AES_256_GCM_SIV"
        #expect(try alert(for: otherProtocol) == Self.alert(.badNextProtocol))
        var shortRandom = good
        shortRandom.random = [1]
        #expect(try alert(for: shortRandom) == Self.alert(.badRandom))
    }

    @Test func aPublicKeyOffTheCurveIsRefused() throws {
        let key = try P256KeyPair()
        var y = key.y
        y[31] ^= 1
        #expect(throws: QuickShareError.self) { try key.sharedSecret(peerX: key.x, peerY: y) }
        #expect(throws: QuickShareError.self) { try key.sharedSecret(peerX: [], peerY: []) }
        #expect(throws: QuickShareError.self) { try P256KeyPair(privateScalar: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: QuickShareError.self) { try P256KeyPair(privateScalar: [UInt8](repeating: 0xFF, count: 32)) }
    }

    private static func alert(_ kind: UKEY2Alert.Kind) -> [UInt8] {
        UKEY2Message(kind: .alert, data: UKEY2Alert(kind).protobuf).protobuf
    }
}
