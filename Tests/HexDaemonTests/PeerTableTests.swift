@testable import HexDaemon
import HexKit
import HexNet
import Testing

@Suite struct PeerTableTests {
    static let own = "11111111-1111-4111-8111-111111111111"
    static let other = "22222222-2222-4222-8222-222222222222"
    let start = ContinuousClock.now

    private func beacon(_ kind: Beacon.Kind = .announce, peer: String = Self.other, instance: String = "I1", name: String = "Bob", interval: Double = 1) -> Beacon {
        Beacon(kind: kind, peer: peer, instance: instance, name: name, versionID: "2.0.0", port: 18521, interval: interval, capabilities: ["ack"])
    }

    private let home = IPv4Address("192.168.1.20")!
    private let wifi = IPv4Address("10.0.0.7")!

    @Test func ownBeaconsAreIgnored() {
        var table = PeerTable(ownUUID: Self.own)
        #expect(table.observe(beacon(peer: Self.own.lowercased()), from: home, at: start) == .none)
        #expect(table.peers.isEmpty)
    }

    @Test func aPeerIsFoundThenUpdatedAndItsAddressesMerged() {
        var table = PeerTable(ownUUID: Self.own)
        guard case .found(let found) = table.observe(beacon(peer: Self.other.lowercased()), from: home, at: start) else {
            Issue.record("not found")
            return
        }
        #expect(found.uuid == Self.other && found.endpoint == Endpoint(host: "192.168.1.20", port: 18521))
        guard case .updated(let updated) = table.observe(beacon(name: "Bob renamed"), from: wifi, at: start + .seconds(1)) else {
            Issue.record("not updated")
            return
        }
        #expect(updated.name == "Bob renamed" && updated.addresses == [wifi, home], "latest address first, others kept")
        #expect(table.peers.count == 1, "keyed by UUID, never by name or address")
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
        _ = table.observe(beacon(peer: "33333333-3333-4333-8333-333333333333", name: "Slow", interval: 10), from: home, at: start)
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

    @Test func peersAreFoundByNameOrUUIDPrefix() async throws {
        var table = PeerTable(ownUUID: Self.own)
        _ = table.observe(beacon(name: "Bob"), from: home, at: start)
        _ = table.observe(beacon(peer: "22223333-0000-4000-8000-000000000000", name: "Bobby"), from: home, at: start)
        #expect(try table.peer(matching: "bob").name == "Bob")
        #expect(try table.peer(matching: "22222222").name == "Bob")
        #expect(throws: ControlLookupError.ambiguous("2222", 2)) { try table.peer(matching: "2222") }
        #expect(throws: ControlLookupError.unknown("carol")) { try table.peer(matching: "carol") }
    }

    @Test func beaconsStayUnderOneKilobyteAndRejectStrangers() {
        let long = Beacon(kind: .announce, peer: Self.other, instance: Self.own, name: String(repeating: "é", count: 5_000),
                          versionID: String(repeating: "9", count: 500), port: 1, interval: 2, capabilities: ["ack"])
        #expect(long.encoded().count < Beacon.maximumSize)
        #expect(Beacon.decode(long.encoded()) == long)
        for stranger in [#"{"format":"other"}"#, "[]", "", #"{"format":"hexd-beacon/1","kind":"announce","peer":"not-a-uuid","instance":"i","name":"n","versionID":"v","port":1,"interval":1,"capabilities":[]}"#,
                         #"{"format":"hexd-beacon/1","kind":"dance","peer":"22222222-2222-4222-8222-222222222222","instance":"i","name":"n","versionID":"v","port":1,"interval":1,"capabilities":[]}"#] {
            #expect(Beacon.decode(Array(stranger.utf8)) == nil, "\(stranger)")
        }
    }
}
