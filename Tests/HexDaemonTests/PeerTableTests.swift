import HexEngine
import HexKit
import HexNet
import Testing

@testable import HexCarrier
@testable import HexDaemon

@Suite(.timeLimit(.minutes(5))) struct PeerTableTests {
    static let own = "11111111-1111-4111-8111-111111111111"
    static let other = "22222222-2222-4222-8222-222222222222"
    let start = ContinuousClock.now

    private func beacon(
        _ kind: Beacon.Kind = .announce, peer: String = Self.other, instance: String = "I1", name: String = "Bob",
        interval: Double = 1
    ) -> Beacon {
        Beacon(
            kind: kind, peer: peer, instance: instance, name: name, versionID: "2.0.0", port: 18521, interval: interval,
            capabilities: ["ack"])
    }

    private let home = IPAddress("192.168.1.20")!
    private let wifi = IPAddress("10.0.0.7")!

    @Test func ownBeaconsAreIgnored() {
        var table = PeerTable(ownUUID: Self.own)
        #expect(table.observe(beacon(peer: Self.own.lowercased()), from: home, at: start) == .none)
        #expect(table.peers.isEmpty)
    }

    @Test func aPeerIsFoundThenUpdatedAndItsAddressesMerged() {
        var table = PeerTable(ownUUID: Self.own)
        guard case .found(let found, nil) = table.observe(beacon(peer: Self.other.lowercased()), from: home, at: start)
        else {
            Issue.record("not found")
            return
        }
        #expect(found.uuid == Self.other && found.endpoint == Endpoint(host: "192.168.1.20", port: 18521))
        guard
            case .updated(let updated) = table.observe(beacon(name: "Bob renamed"), from: wifi, at: start + .seconds(1))
        else {
            Issue.record("not updated")
            return
        }
        #expect(
            updated.name == "Bob renamed" && updated.addresses == [wifi, home], "latest address first, others kept")
        #expect(table.peers.count == 1, "keyed by UUID, never by name or address")
    }

    /// One identity is one peer whatever family and interface it is seen on; a send tries the
    /// address a handshake last proved first, then the others, latest first.
    @Test func aPeerSeenOverBothFamiliesIsOnePeer() throws {
        var table = PeerTable(ownUUID: Self.own)
        let linkLocal = try #require(IPAddress("fe80::1%lo"))
        let unique = try #require(IPAddress("fd00::2"))
        _ = table.observe(beacon(), from: home, at: start)
        _ = table.observe(beacon(), from: linkLocal, at: start + .milliseconds(1))
        guard case .updated(let peer) = table.observe(beacon(), from: unique, at: start + .milliseconds(2)) else {
            Issue.record("a second family made a second peer")
            return
        }
        #expect(table.peers.count == 1)
        #expect(peer.endpoints.map(\.description) == ["[fd00::2]:18521", "[fe80::1%lo]:18521", "192.168.1.20:18521"])
        table.markProven(Self.other, at: home)
        #expect(table.peers[Self.other]?.endpoints.first?.description == "192.168.1.20:18521")
    }

    @Test func aNewInstanceIsARestart() {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(instance: "I1"), from: home, at: start)
        guard case .restarted = table.observe(beacon(instance: "I2"), from: home, at: start) else {
            Issue.record("a new instance was not seen as a restart")
            return
        }
    }

    @Test func aPeerExpiresAfterThreeOfItsIntervals() {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(interval: 1), from: home, at: start)
        _ = table.observe(
            beacon(peer: "33333333-3333-4333-8333-333333333333", name: "Slow", interval: 10), from: home, at: start)
        #expect(table.nextExpiry == start + .seconds(3))
        #expect(table.expire(at: start + .milliseconds(2_999)).isEmpty)
        #expect(table.expire(at: start + .seconds(3)).map(\.name) == ["Bob"])
        #expect(table.nextExpiry == start + .seconds(30))
        #expect(table.peers.values.map(\.name) == ["Slow"], "each peer by its own interval")
    }

    @Test func byeRemovesAPeerAtOnce() {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(), from: home, at: start)
        guard case .left = table.observe(beacon(.bye), from: home, at: start) else {
            Issue.record("bye did not remove the peer")
            return
        }
        #expect(table.observe(beacon(.bye), from: home, at: start) == .none)
    }

    /// A `bye` naming the peer from an address the peer does not use is a spoof: ignored.
    @Test func aByeFromAnotherAddressIsIgnored() {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(), from: home, at: start)
        #expect(table.observe(beacon(.bye), from: wifi, at: start) == .none)
        #expect(table.peers[Self.other] != nil, "still listed")
        _ = table.observe(beacon(), from: wifi, at: start)
        guard case .left = table.observe(beacon(.bye), from: wifi, at: start) else {
            Issue.record("a bye from an address the peer uses was ignored")
            return
        }
    }

    @Test func peersAreFoundByNameOrUUIDPrefix() async throws {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(name: "Bob"), from: home, at: start)
        _ = table.observe(beacon(peer: "22223333-0000-4000-8000-000000000000", name: "Bobby"), from: home, at: start)
        #expect(try table.peer(matching: "bob").name == "Bob")
        #expect(try table.peer(matching: "22222222").name == "Bob")
        #expect(throws: LookupError.ambiguousPeer("2222", matches: 2)) { try table.peer(matching: "2222") }
        #expect(throws: LookupError.noPeer("carol")) { try table.peer(matching: "carol") }
    }

    @Test func beaconsStayUnderOneKilobyteAndRejectStrangers() {
        let long = Beacon(
            kind: .announce, peer: Self.other, instance: Self.own, name: String(repeating: "é", count: 5_000),
            versionID: String(repeating: "9", count: 500), port: 1, interval: 2, capabilities: ["ack"])
        #expect(long.encoded().count < Beacon.maximumSize)
        #expect(Beacon.decode(long.encoded()) == long)
        for stranger in [
            #"{"format":"other"}"#, "[]", "",
            #"{"format":"hexd-beacon/1","kind":"announce","peer":"not-a-uuid","#
                + #""instance":"i","name":"n","versionID":"v","port":1,"interval":1,"capabilities":[]}"#,
            #"{"format":"hexd-beacon/1","kind":"dance","peer":"22222222-2222-4222-8222-222222222222","#
                + #""instance":"i","name":"n","versionID":"v","port":1,"interval":1,"capabilities":[]}"#,
        ] {
            #expect(Beacon.decode(Array(stranger.utf8)) == nil, "\(stranger)")
        }
    }

    @Test func aFullTableDropsTheStrangerUnheardLongest() {
        var table = PeerTable(ownUUID: Self.own, capacity: 3)
        let uuids = (1...5).map { "00000000-0000-4000-8000-00000000000\($0)" }
        _ = table.observe(beacon(peer: uuids[0], name: "friend"), from: home, at: start)
        table.markExchanged(uuids[0])
        _ = table.observe(beacon(peer: uuids[1], name: "old stranger"), from: home, at: start + .seconds(1))
        _ = table.observe(beacon(peer: uuids[2], name: "new stranger"), from: home, at: start + .seconds(2))
        guard case .found(_, let evicted?) = table.observe(beacon(peer: uuids[3]), from: home, at: start + .seconds(3))
        else {
            Issue.record("nothing made room")
            return
        }
        #expect(evicted.name == "old stranger", "the friend is older but has exchanged hexes")
        _ = table.observe(beacon(peer: uuids[4]), from: home, at: start + .seconds(4))
        #expect(table.peers.count == 3 && table.peers[uuids[0]] != nil)
    }

    @Test func aFloodOfInventedPeersLeavesTheTableAtItsCap() {
        var table = PeerTable(ownUUID: Self.own, capacity: 64)
        for index in 0..<10_000 {
            _ = table.observe(beacon(peer: UUID().uuidString), from: home, at: start + .milliseconds(index))
        }
        #expect(table.peers.count == 64)
    }

    @Test func aPeerKeepsOnlyAFewAddresses() {
        var table = PeerTable(ownUUID: Self.own)
        for octet in 1...50 {
            _ = table.observe(beacon(), from: IPAddress("10.0.0.\(octet)")!, at: start)
        }
        #expect(table.peers[Self.other]?.addresses.count == PeerTable.maximumAddresses)
        #expect(table.peers[Self.other]?.addresses.first == IPAddress("10.0.0.50"))
    }

    @Test func theBeaconRateIsKeptPerSenderAndAddress() {
        var limiter = BeaconRateLimiter<IPAddress>(rate: 10, maximumSources: 3)
        let admitted = (0..<100).filter { _ in limiter.admit(peer: Self.other, from: home, at: start) }.count
        #expect(admitted == 20, "a burst of two seconds' worth")
        let otherPeer = limiter.admit(peer: Self.own, from: home, at: start)
        let otherSource = limiter.admit(peer: Self.other, from: wifi, at: start)
        #expect(otherPeer && otherSource, "another peer on that host, and the same claim elsewhere, have theirs")
        let tooSoon = limiter.admit(peer: Self.other, from: home, at: start + .milliseconds(50))
        let refilled = limiter.admit(peer: Self.other, from: home, at: start + .milliseconds(100))
        #expect(!tooSoon && refilled, "refilled at the rate")
        let fourth = limiter.admit(peer: Self.other, from: IPAddress("10.9.9.9")!, at: start + .seconds(1))
        #expect(fourth, "a new sender past the cap is read: the stalest is forgotten to make room")
    }

    /// Up to 16 peers, the interval configured; past that, longer in proportion, at most doubling
    /// from one beacon to the next, shorter again at once when the crowd leaves, and never past
    /// what a beacon may announce.
    @Test func theAnnounceIntervalGrowsWithACrowd() {
        let two = Duration.seconds(2)
        #expect(AnnounceInterval.next(configured: two, peers: 0, previous: two) == two)
        #expect(AnnounceInterval.next(configured: two, peers: 16, previous: two) == two)
        #expect(AnnounceInterval.next(configured: two, peers: 24, previous: two) == .seconds(3))
        #expect(AnnounceInterval.next(configured: two, peers: 160, previous: two) == .seconds(4), "at most doubled")
        #expect(AnnounceInterval.next(configured: two, peers: 160, previous: .seconds(16)) == .seconds(20))
        #expect(AnnounceInterval.next(configured: two, peers: 3, previous: .seconds(20)) == two, "back at once")
        let longest = Duration.seconds(600)
        #expect(AnnounceInterval.next(configured: longest, peers: 1_000, previous: longest) == longest)
    }

    /// Thirty daemons on one host, each at half the rate, are all read; past sixteen times the
    /// rate the host's datagrams are dropped unread, and past 64 times, everyone's.
    @Test func oneAddressMayCarryManyDaemonsWithinACap() {
        var limiter = BeaconRateLimiter<IPAddress>(rate: 2)
        let peers = (0..<30).map { String(format: "6F9619FF-8B86-8011-B42D-%012X", $0) }
        var read = 0
        for second in 0..<4 {
            let now = start + .seconds(second)
            for peer in peers
            where limiter.admit(home, at: now) && limiter.admit(peer: peer, from: home, at: now) {
                read += 1
            }
        }
        #expect(read == 120, "every daemon's beacon, every second")
        var flood = BeaconRateLimiter<IPAddress>(rate: 2)
        let fromOneHost = (0..<1_000).filter { _ in flood.admit(home, at: start) }.count
        #expect(fromOneHost == 64, "two seconds of sixteen times the rate")
        var spoofed = BeaconRateLimiter<IPAddress>(rate: 2)
        let fromEverywhere = (0..<1_000).filter { index in
            spoofed.admit(IPAddress("10.0.\(index / 250).\(index % 250)")!, at: start)
        }.count
        #expect(fromEverywhere == 256, "two seconds of 64 times the rate, from all addresses together")
    }

    /// A flood from everywhere spends the budget of all sources, but not a known peer's: its
    /// beacons are still read (within its own address's budget) until the flood is over.
    @Test func aFloodOfStrangersDoesNotDrownAKnownPeer() {
        var limiter = BeaconRateLimiter<IPAddress>(rate: 2)
        limiter.markKnown(home, at: start)
        let strangers = (0..<1_000).filter { index in
            limiter.admit(IPAddress("10.0.\(index / 250).\(index % 250)")!, at: start)
        }.count
        #expect(strangers == 256)
        #expect(limiter.admit(home, at: start) && !limiter.admit(wifi, at: start), "the known peer's address is read")
        let fromHome = (0..<1_000).filter { _ in limiter.admit(home, at: start) }.count
        #expect(fromHome == 63, "within its own address's budget (one token was taken above)")
    }

    /// Every number a beacon carries, at its extremes: dropped or bounded, never a trap.
    @Test(arguments: [
        "0", "-1", "1e300", "-1e300", "9223372036854775808", "18446744073709551616", "0.5", "65536", #""18521""#,
        "null",
    ])
    func extremeNumbersInABeaconAreDroppedOrBounded(_ value: String) {
        func beaconText(port: String, interval: String) -> [UInt8] {
            Array(
                (#"{"format":"hexd-beacon/1","kind":"announce","peer":"\#(Self.other)","instance":"\#(Self.own)","#
                    + #""name":"n","versionID":"2.0.0","port":\#(port),"interval":\#(interval),"capabilities":[]}"#)
                    .utf8)
        }
        #expect(Beacon.decode(beaconText(port: value, interval: "2")) == nil, "port \(value)")
        let withInterval = Beacon.decode(beaconText(port: "18521", interval: value))
        if let withInterval {
            #expect(
                Beacon.intervalRange.contains(withInterval.interval),
                "interval \(value) read as \(withInterval.interval)")
            var table = PeerTable(ownUUID: Self.own)
            _ = table.observe(withInterval, from: home, at: start)
            #expect(table.nextExpiry != nil)
        } else {
            #expect(["0", "-1", "-1e300", #""18521""#, "null"].contains(value), "interval \(value) was dropped")
        }
    }

    /// A beacon claiming a pinned UUID with another key, or with none (which would mean
    /// plaintext), is kept apart: the peer's entry keeps its address, and one event per new claim.
    @Test func aBeaconWithAnotherKeyThanThePinnedOneNeverRedirects() {
        let pinned = String(repeating: "a1", count: 32)
        let forged = String(repeating: "e5", count: 32)
        func keyed(_ fingerprint: String?) -> Beacon {
            Beacon(
                kind: .announce, peer: Self.other, instance: "I1", name: "Bob", versionID: "2.0.0", port: 18521,
                interval: 1,
                capabilities: fingerprint == nil ? [] : ["ack", "tls"], fingerprint: fingerprint)
        }
        var table = PeerTable(ownUUID: Self.own)
        guard case .found = table.observe(keyed(pinned), from: home, at: start, pinnedKey: pinned, signed: true) else {
            Issue.record("the genuine peer was not found")
            return
        }
        let attacker = IPAddress("192.168.1.66")!
        for claim in [forged, nil] {
            guard
                case .keyMismatch(let impostor) = table.observe(
                    keyed(claim), from: attacker, at: start, pinnedKey: pinned)
            else {
                Issue.record("no mismatch for \(claim ?? "no key")")
                return
            }
            #expect(
                impostor.fingerprint == claim && impostor.pinned == pinned && impostor.endpoint.host == "192.168.1.66")
            #expect(
                table.observe(keyed(claim), from: attacker, at: start, pinnedKey: pinned) == .none,
                "the same claim again is no news")
            #expect(table.peers[Self.other]?.addresses == [home] && table.peers[Self.other]?.fingerprint == pinned)
        }
        #expect(table.impostors.count == 1, "one impostor per UUID, the latest")
        // A bye from the attacker's address does not remove the peer.
        #expect(table.observe(beacon(.bye), from: attacker, at: start, pinnedKey: pinned) == .none)
        _ = table.expire(at: start + .seconds(3))
        #expect(table.impostors.isEmpty, "impostors expire as peers do")
        table.forgetImpostor(Self.other)
    }

    @Test func impostorsAreBounded() {
        var table = PeerTable(ownUUID: Self.own)
        for index in 0..<(PeerTable.maximumImpostors * 2) {
            let uuid = String(format: "%08X-0000-4000-8000-000000000000", index)
            let beacon = Beacon(
                kind: .announce, peer: uuid, instance: "I", name: "x", versionID: "2.0.0", port: 1, interval: 1,
                capabilities: [])
            _ = table.observe(
                beacon, from: home, at: start + .milliseconds(index), pinnedKey: String(repeating: "a1", count: 32))
        }
        #expect(table.impostors.count == PeerTable.maximumImpostors && table.peers.isEmpty)
    }

    @Test func receivedStringsAreCutToTheirCaps() {
        let name = String(repeating: "n", count: 500)
        let text =
            #"{"format":"hexd-beacon/1","kind":"announce","peer":"\#(Self.other)","#
            + #""instance":"\#(Self.own)","name":"\#(name)","versionID":"2.0.0","#
            + #""port":1,"interval":2,"capabilities":["a","b","c","d","e","f","g","h","i","j"]}"#
        let beacon = Beacon.decode(Array(text.utf8))
        #expect(beacon?.name.utf8.count == Beacon.maximumNameBytes)
        #expect(beacon?.capabilities.count == Beacon.maximumCapabilities)
    }
}
