import HexKit
import HexTLS
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// The pairings under way: the code both sides work out, the commitment and code checks, expiry
/// and bounds. Real nonces and hashes; the clock is passed in.
@Suite(.timeLimit(.minutes(5))) struct PairingBookTests {
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
        try bob.received(
            from: aliceKey, uuid: Self.alice, name: "Alice",
            commitment: try #require(PairingCode.commitment(to: aliceNonce)),
            ourNonce: bobNonce, source: "10.0.0.1", isKnown: true, at: now)
        #expect(throws: LookupError.noPairing("alice"), "nothing to accept before the nonce is revealed") {
            try bob.request(matching: "alice", at: now)
        }
        let revealed = try bob.revealed(nonce: aliceNonce, by: aliceKey, ownKey: bobKey, at: now)
        let aliceCode = PairingCode.verificationCode(
            initiator: aliceKey, responder: bobKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
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
        let aliceSees = PairingCode.verificationCode(
            initiator: aliceKey, responder: relayKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
        let bobSees = PairingCode.verificationCode(
            initiator: relayKey, responder: bobKey, initiatorNonce: aliceNonce, responderNonce: bobNonce)
        #expect(aliceSees != nil && aliceSees != bobSees)
    }

    @Test func aNonceThatIsNotTheOneCommittedToDropsTheRequest() throws {
        let (aliceKey, bobKey) = (try key(1), try key(2))
        let nonce = try PairingCode.nonce()
        var bob = PairingBook()
        try bob.received(
            from: aliceKey, uuid: Self.alice, name: "Alice",
            commitment: try #require(PairingCode.commitment(to: nonce)),
            ourNonce: try PairingCode.nonce(), source: "10.0.0.1", isKnown: false, at: now)
        #expect(throws: PairingError.commitmentMismatch) {
            try bob.revealed(nonce: try PairingCode.nonce(), by: aliceKey, ownKey: bobKey, at: now)
        }
        #expect(throws: PairingError.noRequest, "no second guess") {
            try bob.revealed(nonce: nonce, by: aliceKey, ownKey: bobKey, at: now)
        }
        #expect(throws: PairingError.noRequest, "another key has no request") {
            try bob.revealed(nonce: nonce, by: try key(9), ownKey: bobKey, at: now)
        }
    }

    @Test func anAcceptMustComeFromTheKeyAskedWithTheSameUUIDAndCode() throws {
        let bobKey = try key(2)
        let bob = "22222222-2222-4222-8222-222222222222"
        var alice = PairingBook()
        alice.sent(
            .init(peerUUID: bob, name: "Bob", key: bobKey, code: "1A2B3C4D", expires: now + PairingBook.lifetime),
            at: now)
        #expect(alice.pending(for: bob, at: now)?.awaitingUs == false)
        #expect(throws: PairingError.noRequest) {
            try alice.accepted(by: try key(3), uuid: bob, code: "1A2B3C4D", at: now)
        }
        #expect(throws: PairingError.noRequest) {
            try alice.accepted(by: bobKey, uuid: Self.alice, code: "1A2B3C4D", at: now)
        }
        #expect(throws: PairingError.codeMismatch) {
            try alice.accepted(by: bobKey, uuid: bob, code: "FFFFFFFF", at: now)
        }
        #expect(throws: PairingError.noRequest, "a wrong code ends the request") {
            try alice.accepted(by: bobKey, uuid: bob, code: "1A2B3C4D", at: now)
        }
        alice.sent(
            .init(peerUUID: bob, name: "Bob", key: bobKey, code: "1A2B3C4D", expires: now + PairingBook.lifetime),
            at: now)
        #expect(try alice.accepted(by: bobKey, uuid: bob, code: "1A2B3C4D", at: now).name == "Bob")
    }

    /// A flood of strangers from many addresses leaves the book at its caps, never pushes out a
    /// request of a peer known before, and lets no address hold more than its share.
    @Test func aFloodOfStrangersNeverPushesOutAKnownPeer() throws {
        var book = PairingBook()
        let commitment = String(repeating: "0", count: 64)
        try book.received(
            from: try key(100_000), uuid: Self.alice, name: "Honest", commitment: commitment,
            ourNonce: [],
            source: "10.0.0.1", isKnown: true, at: now)
        var refusedByAddress = 0
        for number in 0..<(PairingBook.capacity * 20) {
            let stranger = try key(number)
            do throws(PairingError) {
                try book.received(
                    from: stranger, uuid: "S\(number)", name: "Honest", commitment: commitment,
                    ourNonce: [],
                    source: "10.0.1.\(number % 50)", isKnown: false, at: now + .milliseconds(number))
            } catch {
                #expect(error == .tooManyFromAddress("10.0.1.\(number % 50)"))
                refusedByAddress += 1
            }
            book.sent(
                .init(
                    peerUUID: Self.alice, name: "x", key: try key(number), code: "00000000",
                    expires: now + .seconds(number)), at: now)
        }
        #expect(book.incoming.count == PairingBook.capacity + 1 && book.outgoing.count == PairingBook.capacity)
        #expect(book.incoming[try key(100_000)]?.name == "Honest", "the known peer keeps its place")
        #expect(refusedByAddress == 0, "50 addresses: the capacity bounds them before their share does")
        book.forget(peerUUID: Self.alice)
        #expect(book.incoming.count == PairingBook.capacity && book.outgoing.isEmpty)

        // One address asks again and again: it keeps its share, and is refused past it.
        var single = PairingBook()
        for number in 0..<5 {
            let stranger = try key(number)
            let outcome = Result { () throws(PairingError) in
                try single.received(
                    from: stranger, uuid: "S\(number)", name: "x", commitment: commitment, ourNonce: [],
                    source: "10.0.2.1", isKnown: false, at: now)
            }
            if number < PairingBook.perAddress {
                #expect(throws: Never.self) { try outcome.get() }
            } else {
                #expect(throws: PairingError.tooManyFromAddress("10.0.2.1")) { try outcome.get() }
            }
        }
        #expect(single.incoming.count == PairingBook.perAddress)
    }
}
