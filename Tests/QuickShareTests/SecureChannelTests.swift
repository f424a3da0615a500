import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct SecureChannelTests {
    let vectors = Vectors.file

    private func channels() throws -> (client: SecureChannel, server: SecureChannel) {
        var client = UKEY2Client(
            keyPair: try P256KeyPair(privateScalar: vectors.bytes("set1_client_private")),
            random: vectors.bytes("set1_client_random"))
        var server = UKEY2Server(
            keyPair: try P256KeyPair(privateScalar: vectors.bytes("set1_server_private")),
            random: vectors.bytes("set1_server_random"))
        let (finish, keys) = try client.finish(answering: try server.serverInit(answering: client.clientInit))
        _ = try server.keys(finishing: finish)
        return (SecureChannel(keys: keys.channelKeys(as: .client)), SecureChannel(keys: keys.channelKeys(as: .server)))
    }

    @Test func sealedMessagesAreTheVectorsBytesAndOpenOnTheOtherSide() throws {
        var (client, server) = try channels()
        let sealed = try client.seal(vectors.bytes("set1_c2s_message"), iv: vectors.bytes("set1_c2s_iv"))
        #expect(sealed == vectors.bytes("set1_c2s_secure_message"))
        #expect(try server.open(sealed) == vectors.bytes("set1_c2s_message")[...])
        // The server's second message carries sequence number 2.
        _ = try server.seal([1, 2, 3])
        let second = try server.seal(vectors.bytes("set1_s2c_message"), iv: vectors.bytes("set1_s2c_iv"))
        #expect(second == vectors.bytes("set1_s2c_secure_message"))
    }

    @Test func aMessageOutOfTurnIsRefused() throws {
        var (client, server) = try channels()
        let first = try client.seal([1])
        let second = try client.seal([2])
        #expect(throws: QuickShareError.self) { try server.open(second) }
        var fresh = try channels().server
        #expect(try fresh.open(first) == [1])
        #expect(throws: QuickShareError.self) { try fresh.open(first) }
    }

    @Test func aTamperedMessageIsRefusedBeforeItIsDecrypted() throws {
        var (client, server) = try channels()
        var sealed = try client.seal(Array("a link".utf8))
        // The signature is checked first: a bit flipped in the body, which would also break its
        // padding, is refused for its signature.
        for index in [sealed.count / 2, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: QuickShareError("a secure message's signature does not verify")) {
                try server.open(tampered)
            }
        }
        sealed.removeLast()
        #expect(throws: QuickShareError.self) { try server.open(sealed) }
        // A message sealed with the server's own keys is not the client's.
        var loopback = try channels().server
        #expect(throws: QuickShareError.self) { try server.open(try loopback.seal([9])) }
    }
}
