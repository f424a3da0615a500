@testable import HexDaemon
import HexKit
import HexTLS
import Testing

/// The pairings under way: the code both sides work out, the commitment and code checks, expiry
/// and bounds. Real nonces and hashes; the clock is passed in.
@Suite struct PairingBookTests {
    static let alice = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
    let now = ContinuousClock.now

    private func key(_ number: Int) throws -> Fingerprint {
        try #require(Fingerprint(hex: String(repeating: "0", count: 56) + String(format: "%08x", number)))
    }

    @Test func bothSidesWorkOutTheSameCodeOnceTheNonceIsRevealed() throws {
        let (aliceKey, bobKey) = (try key(1), try key(2))
        let aliceNonce = try PairingCode.nonce()
        let bobNonce = try PairingCode.nonce()
        var bob = PairingBook()
        bob.received(from: aliceKey, uuid: Self.alice, name: "Alice", commitment: try #require(PairingCode.commitment(to: aliceNonce)),
                     ourNonce: bobNonce, at: now)
        #expect(throws: LookupError.noPairing("alice"), "nothing to accept before the nonce is revealed") {
            try bob.request(matching: "alice", at: now)
        }
        let revealed = try bob.revealed(nonce: aliceNonce, by: aliceKey, ownKey: bobKey, at: now)
        let aliceCode = PairingCode.verificationCode(initiator: aliceKey, responder: bobKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
        #expect(revealed.code == aliceCode)
        #expect(aliceCode?.count == 8 && aliceCode?.allSatisfy { $0.isHexDigit && !$0.isLowercase } == true)
        #expect(try bob.request(matching: "ALICE", at: now).key == aliceKey, "by name, any case")
        #expect(try bob.request(matching: "6f96", at: now).key == aliceKey, "by UUID prefix")
        #expect(bob.pending(for: Self.alice, at: now)?.awaitingUs == true)
        #expect(throws: LookupError.noPairing("alice"), "requests expire") {
            try bob.request(matching: "alice", at: now + PairingBook.lifetime)
        }
    }

    /// A relay in the middle shows each side its own key: the codes then differ whatever nonces it passes on.
    @Test func anotherKeyInTheMiddleGivesAnotherCode() throws {
        let (aliceKey, bobKey, relayKey) = (try key(1), try key(2), try key(3))
        let (aliceNonce, bobNonce) = (try PairingCode.nonce(), try PairingCode.nonce())
        let aliceSees = PairingCode.verificationCode(initiator: aliceKey, responder: relayKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
        let bobSees = PairingCode.verificationCode(initiator: relayKey, responder: bobKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
        #expect(aliceSees != nil && aliceSees != bobSees)
    }

    @Test func aNonceThatIsNotTheOneCommittedToDropsTheRequest() throws {
        let (aliceKey, bobKey) = (try key(1), try key(2))
        let nonce = try PairingCode.nonce()
        var bob = PairingBook()
        bob.received(from: aliceKey, uuid: Self.alice, name: "Alice", commitment: try #require(PairingCode.commitment(to: nonce)),
                     ourNonce: try PairingCode.nonce(), at: now)
        #expect(throws: PairingError.commitmentMismatch) { try bob.revealed(nonce: try PairingCode.nonce(), by: aliceKey, ownKey: bobKey, at: now) }
        #expect(throws: PairingError.noRequest, "no second guess") { try bob.revealed(nonce: nonce, by: aliceKey, ownKey: bobKey, at: now) }
        #expect(throws: PairingError.noRequest, "another key has no request") { try bob.revealed(nonce: nonce, by: try key(9), ownKey: bobKey, at: now) }
    }

    @Test func anAcceptMustComeFromTheKeyAskedWithTheSameUUIDAndCode() throws {
        let bobKey = try key(2)
        let bob = "22222222-2222-4222-8222-222222222222"
        var alice = PairingBook()
        alice.sent(.init(peerUUID: bob, name: "Bob", key: bobKey, code: "1A2B3C4D", expires: now + PairingBook.lifetime), at: now)
        #expect(alice.pending(for: bob, at: now)?.awaitingUs == false)
        #expect(throws: PairingError.noRequest) { try alice.accepted(by: try key(3), uuid: bob, code: "1A2B3C4D", at: now) }
        #expect(throws: PairingError.noRequest) { try alice.accepted(by: bobKey, uuid: Self.alice, code: "1A2B3C4D", at: now) }
        #expect(throws: PairingError.codeMismatch) { try alice.accepted(by: bobKey, uuid: bob, code: "FFFFFFFF", at: now) }
        #expect(throws: PairingError.noRequest, "a wrong code ends the request") { try alice.accepted(by: bobKey, uuid: bob, code: "1A2B3C4D", at: now) }
        alice.sent(.init(peerUUID: bob, name: "Bob", key: bobKey, code: "1A2B3C4D", expires: now + PairingBook.lifetime), at: now)
        #expect(try alice.accepted(by: bobKey, uuid: bob, code: "1A2B3C4D", at: now).name == "Bob")
    }

    @Test func aFloodOfRequestsLeavesTheBookAtItsCapacity() throws {
        var book = PairingBook()
        for number in 0..<(PairingBook.capacity * 4) {
            book.received(from: try key(number), uuid: Self.alice, name: "x", commitment: String(repeating: "0", count: 64), ourNonce: [],
                          at: now + .milliseconds(number))
            book.sent(.init(peerUUID: Self.alice, name: "x", key: try key(number), code: "00000000", expires: now + .seconds(number)), at: now)
        }
        #expect(book.incoming.count == PairingBook.capacity && book.outgoing.count == PairingBook.capacity)
        book.forget(peerUUID: Self.alice)
        #expect(book.incoming.isEmpty && book.outgoing.isEmpty)
    }
}
