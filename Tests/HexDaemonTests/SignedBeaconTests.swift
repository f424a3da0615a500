import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import Testing

@testable import HexDaemon

/// Beacons that prove themselves (Protocol.md, section 9): signed by the key their peer UUID
/// derives from, numbered so that a replay changes nothing.
@Suite(.timeLimit(.minutes(5))) struct SignedBeaconTests {
    private static func identity(_ name: String, in directory: TemporaryDirectory) throws -> TLSIdentity {
        try TLSIdentity.loadOrCreate(
            keyPath: directory.file(name + ".key"),
            certificatePath: directory.file(name + ".crt"),
            commonName: name
        ).0
    }

    /// A beacon of `signer`'s, signed by `signingKey` (the signer's own unless said otherwise).
    private static func beacon(
        _ kind: Beacon.Kind = .announce, of signer: TLSIdentity, signedBy signingKey: TLSIdentity? = nil,
        boot: UInt64 = 1,
        sequence: UInt64 = 1, name: String = "Bob"
    ) throws -> Beacon {
        var beacon = Beacon(
            kind: kind, peer: signer.deviceID.uppercaseText, instance: UUID().uuidString, name: name,
            versionID: HexdVersion.current, port: 18521, interval: 2, capabilities: ["ack", "tls"],
            fingerprint: signer.fingerprint.description)
        guard signingKey != nil else { return try #require(beacon.signed(by: signer, boot: boot, sequence: sequence)) }
        beacon.key = Fingerprint.hex(signer.publicKey.subjectPublicKeyInfo)
        beacon.boot = boot
        beacon.sequence = sequence
        let signature = signingKey?.sign(try #require(beacon.signedMessage))
        beacon.signature = Fingerprint.hex(try #require(signature))
        return beacon
    }

    /// As a receiver reads it off the wire.
    private static func received(_ beacon: Beacon) throws -> Beacon {
        try #require(Beacon.decode(beacon.encoded()))
    }

    @Test func aSignedBeaconProvesItsDerivedIDAndNothingElseDoes() throws {
        let directory = try TemporaryDirectory()
        let bob = try Self.identity("bob", in: directory)
        let eve = try Self.identity("eve", in: directory)
        #expect(bob.deviceID.isKeyDerived && bob.deviceID != eve.deviceID)
        #expect(BeaconCheck(try Self.received(try Self.beacon(of: bob))) == .signed(boot: 1, sequence: 1))

        // Eve signs a beacon naming Bob's ID and key: the signature does not hold.
        guard case .forged = BeaconCheck(try Self.received(try Self.beacon(of: bob, signedBy: eve))) else {
            throw BeaconFailure("Eve's signature passed for Bob")
        }
        // Eve announces her own key under Bob's ID: her key derives another ID.
        var claim = try Self.beacon(of: eve)
        claim.peer = bob.deviceID.uppercaseText
        let claimSignature = eve.sign(try #require(claim.signedMessage))
        claim.signature = Fingerprint.hex(try #require(claimSignature))
        guard case .forged(let reason) = BeaconCheck(try Self.received(claim)) else {
            throw BeaconFailure("Eve's key spoke for Bob")
        }
        #expect(reason.contains(eve.deviceID.uppercaseText))
        // One changed byte of a signed field (the name) breaks the signature.
        var renamed = try Self.beacon(of: bob)
        renamed.name = "Bob Jr"
        guard case .forged = BeaconCheck(try Self.received(renamed)) else {
            throw BeaconFailure("a changed name kept its signature")
        }
        // A derived ID without a signature, and with the signature stripped.
        var unsigned = try Self.beacon(of: bob)
        unsigned.signature = nil
        guard case .forged = BeaconCheck(try Self.received(unsigned)) else {
            throw BeaconFailure("an unsigned derived ID passed")
        }
        // A legacy peer's own UUID, unsigned, is a claim.
        let legacy = Beacon(
            kind: .announce, peer: "6F9619FF-8B86-4011-B42D-00C04FC964FF", instance: UUID().uuidString,
            name: "Old",
            versionID: "1.0", port: 18521, interval: 2, capabilities: [])
        #expect(BeaconCheck(try Self.received(legacy)) == .unsigned)
    }

    /// The signature covers the fields as they came: a name over the cap verifies, and is cut after.
    @Test func theSignatureCoversTheFieldsBeforeTheyAreCut() throws {
        let directory = try TemporaryDirectory()
        let bob = try Self.identity("bob", in: directory)
        var beacon = try Self.beacon(of: bob)
        beacon.name = String(repeating: "b", count: 300)
        let signature = bob.sign(try #require(beacon.signedMessage))
        beacon.signature = Fingerprint.hex(try #require(signature))
        let received = try Self.received(beacon)
        #expect(received.name.utf8.count == Beacon.maximumNameBytes)
        #expect(BeaconCheck(received) == .signed(boot: 1, sequence: 1))
    }

    @Test func olderBeaconsAreReplaysAndTheLatestAgainIsARepeat() {
        var freshness = BeaconFreshness()
        #expect(freshness.judge(peer: "B", boot: 2, sequence: 5) == .fresh)
        #expect(freshness.judge(peer: "B", boot: 2, sequence: 5) == .repeated)
        #expect(freshness.judge(peer: "B", boot: 2, sequence: 4) == .stale)
        #expect(freshness.judge(peer: "B", boot: 1, sequence: 900) == .stale, "a beacon of an earlier start")
        #expect(freshness.judge(peer: "B", boot: 3, sequence: 1) == .fresh, "a restart")
        #expect(freshness.judge(peer: "C", boot: 1, sequence: 1) == .fresh, "each peer its own")
    }

    /// The newest beacon accepted from a peer, heard again to the byte of its signature, needs no
    /// second check; the same numbers with another signature (a forgery built on them) do.
    @Test func aBeaconHeardAgainIsKnownByItsSignature() throws {
        let directory = try TemporaryDirectory()
        let bob = try Self.identity("bob", in: directory)
        let beacon = try #require(try Self.beacon(of: bob).signed(by: bob, boot: 1, sequence: 7))
        var freshness = BeaconFreshness()
        #expect(!freshness.isHeardAgain(beacon), "nothing accepted yet")
        #expect(freshness.judge(peer: beacon.peer, boot: 1, sequence: 7, signature: beacon.signature) == .fresh)
        #expect(freshness.isHeardAgain(beacon))
        var forged = beacon
        forged.name = "Mallory"
        forged.signature = String(repeating: "0", count: 128)
        #expect(!freshness.isHeardAgain(forged), "other signature bytes are checked as any beacon")
        #expect(BeaconCheck(try Self.received(forged)) == .forged("its signature does not hold"))
    }

    @Test func theFreshnessTableIsBounded() {
        var freshness = BeaconFreshness()
        for index in 0...BeaconFreshness.capacity { _ = freshness.judge(peer: "P\(index)", boot: 1, sequence: 1) }
        #expect(
            freshness.judge(peer: "P\(BeaconFreshness.capacity)", boot: 1, sequence: 1) == .repeated,
            "the newest is kept")
        #expect(freshness.judge(peer: "P0", boot: 1, sequence: 1) == .fresh, "the oldest made room")
    }

    /// A signed peer leaves only by its own signed `bye`; an address a replay came from is a
    /// candidate after the others, and the address that proved the key is tried first.
    @Test func aSignedPeerIgnoresUnsignedByesAndOrdersItsAddresses() {
        let peer = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
        let home = IPAddress("192.168.1.20")!
        let attacker = IPAddress("192.168.1.66")!
        let wifi = IPAddress("10.0.0.7")!
        func beacon(_ kind: Beacon.Kind) -> Beacon {
            Beacon(
                kind: kind, peer: peer, instance: "I1", name: "Bob", versionID: "2.0.0", port: 18521, interval: 1,
                capabilities: ["ack", "tls"], fingerprint: String(repeating: "a1", count: 32))
        }
        var table = PeerTable(ownUUID: "11111111-1111-4111-8111-111111111111")
        let start = ContinuousClock.now
        guard case .found(let found, nil) = table.observe(beacon(.announce), from: home, at: start, signed: true) else {
            Issue.record("not found")
            return
        }
        #expect(found.isSigned && found.speaksTLS)
        #expect(
            table.observe(beacon(.bye), from: home, at: start) == .none,
            "an unsigned bye, even from its own address")
        table.heardAgain(peer, from: attacker)
        #expect(
            table.peers[peer]?.endpoints.map(\.host) == ["192.168.1.20", "192.168.1.66"],
            "a repeat's source comes last")
        _ = table.observe(beacon(.announce), from: wifi, at: start + .seconds(1), signed: true)
        table.markProven(peer, at: home)
        #expect(
            table.peers[peer]?.endpoints.map(\.host) == ["192.168.1.20", "10.0.0.7", "192.168.1.66"],
            "the proven address first")
        guard case .left = table.observe(beacon(.bye), from: attacker, at: start + .seconds(1), signed: true) else {
            Issue.record("its own signed bye did not remove it")
            return
        }
    }

    /// Beacons claiming a peer in the table have their signatures checked within that peer's
    /// budget; one not in the table has none here (the discovery service's own budget applies).
    @Test func signatureChecksOfAPeerHaveABudget() {
        var table = PeerTable(ownUUID: "11111111-1111-4111-8111-111111111111")
        let peer = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
        let start = ContinuousClock.now
        #expect(table.admitCheck(of: peer, at: start) == nil)
        let beacon = Beacon(
            kind: .announce, peer: peer, instance: "I1", name: "Bob", versionID: "2.0.0", port: 18521,
            interval: 1,
            capabilities: ["ack", "tls"])
        _ = table.observe(beacon, from: IPAddress("192.168.1.20")!, at: start, signed: true)
        let burst = Int(PeerTable.checksPerPeer * 2)
        let admitted = (0..<(burst + 50)).filter { _ in table.admitCheck(of: peer, at: start) == true }.count
        #expect(admitted == burst, "the burst, then none at the same instant")
        #expect(table.admitCheck(of: peer, at: start + .seconds(1)) == true, "refilled at the rate")
    }

    /// An unsigned beacon is a legacy peer's: whatever it says, it gets no TLS and no key.
    @Test func anUnsignedBeaconAnnouncesNoKey() {
        var table = PeerTable(ownUUID: "11111111-1111-4111-8111-111111111111")
        let beacon = Beacon(
            kind: .announce, peer: "6F9619FF-8B86-4011-B42D-00C04FC964FF", instance: "I1", name: "Old",
            versionID: "2.0.0", port: 18521, interval: 1, capabilities: ["ack", "tls"],
            fingerprint: String(repeating: "a1", count: 32))
        guard case .found(let found, nil) = table.observe(beacon, from: IPAddress("192.168.1.20")!, at: .now) else {
            Issue.record("not found")
            return
        }
        #expect(!found.isSigned && !found.speaksTLS && found.fingerprint == nil && found.capabilities == ["ack"])
    }
}

/// A check that found what it must not.
private struct BeaconFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
