import HexDBus
import HexNet
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// What hexd says to Avahi and reads from it, without a bus (the netns test `avahi.sh` runs it
/// against avahi-daemon, avahi-browse and python-zeroconf).
@Suite(.timeLimit(.minutes(5))) struct AvahiAPITests {
    static let id = "6F9619FF-8B86-8011-B42D-00C04FC964FF"

    private func resolved(
        address: String = "10.0.0.7", interface: Int32 = 3, port: UInt16 = 18_521,
        txt: [String] = ["id=\(id)", "v=2.0.0", "in=I1", "fp=abab"]
    ) -> [DBusValue] {
        [
            .int32(interface), .int32(0), .string("Ada"), .string("_hexd._tcp"), .string("local"),
            .string("ada.local"), .int32(0), .string(address), .uint16(port),
            .byteStrings(txt.map { Array($0.utf8) }), .uint32(0),
        ]
    }

    @Test func theServiceIsAddedWithTheInstanceNamePortAndTXT() throws {
        let advert = try DNSSDAdvert(
            name: "Ada", peerID: Self.id, versionID: "2.0.0", start: "I1",
            fingerprint: String(repeating: "ab", count: 32), port: 18_521)
        let call = AvahiAPI.addService(to: "/Client1/EntryGroup1", advert)
        #expect(call.signature == "iiussssqaay")
        #expect(call.path == "/Client1/EntryGroup1" && call.member == "AddService")
        #expect(call.body[3] == .string("Ada") && call.body[4] == .string("_hexd._tcp"))
        #expect(call.body[7] == .uint16(18_521))
        let txt = try #require(call.body[8].byteStringsValue).map { String(decoding: $0, as: UTF8.self) }
        #expect(txt == ["id=\(Self.id)", "v=2.0.0", "in=I1", "fp=abababababababab"])
    }

    @Test func aBrowserItemIsReadOnlyFromItsSignature() throws {
        let body: [DBusValue] = [
            .int32(2), .int32(1), .string("Ada"), .string("_hexd._tcp"), .string("local"),
            .uint32(4),
        ]
        let item = AvahiAPI.Item(signal: body)
        #expect(
            item?.key == AvahiAPI.Item.Key(interface: 2, family: 1, name: "Ada", type: "_hexd._tcp", domain: "local"))
        #expect(item?.flags == 4)
        #expect(AvahiAPI.Item(signal: Array(body.prefix(5))) == nil)
        #expect(AvahiAPI.Item(signal: [.string("2")] + body.dropFirst()) == nil)
        var otherType = body
        otherType[3] = .string("_kdeconnect._udp")
        #expect(AvahiAPI.Item(signal: otherType)?.key.type == "_kdeconnect._udp", "a carrier's type is its own")
        #expect(
            AvahiAPI.resolve(try #require(AvahiAPI.Item(signal: otherType)).key).body[3] == .string("_kdeconnect._udp"))
    }

    /// A carrier's service goes in the same group, with its own type, name, port and TXT.
    @Test func aCarriersServiceIsAddedWithItsOwnType() throws {
        let persona = DNSSDPersona(
            type: "_kdeconnect._udp", name: "0123456789abcdef0123456789abcdef", port: 1_716,
            txt: [("id", "0123456789abcdef0123456789abcdef"), ("protocol", "8")])
        let call = AvahiAPI.addService(to: "/Client1/EntryGroup1", persona)
        #expect(call.signature == "iiussssqaay")
        #expect(
            call.body[3] == .string("0123456789abcdef0123456789abcdef") && call.body[4] == .string("_kdeconnect._udp"))
        #expect(call.body[7] == .uint16(1_716))
        let txt = try #require(call.body[8].byteStringsValue).map { String(decoding: $0, as: UTF8.self) }
        #expect(txt == ["id=0123456789abcdef0123456789abcdef", "protocol=8"])
        #expect(AvahiAPI.newBrowser("_kdeconnect._udp").body[2] == .string("_kdeconnect._udp"))
    }

    @Test func aResolvedInstanceIsASightingOfItsPeer() throws {
        let sighting = try #require(AvahiAPI.found(resolved: resolved(), interval: .seconds(40))?.sighting)
        #expect(sighting.uuid == Self.id && sighting.name == "Ada" && sighting.port == 18_521)
        #expect(sighting.address == IPAddress("10.0.0.7") && sighting.instance == "I1" && sighting.versionID == "2.0.0")
        #expect(sighting.kind == .present && !sighting.isSigned && sighting.interval == .seconds(40))
        let leaving = try #require(
            AvahiAPI.found(resolved: resolved(), interval: .seconds(40), leaving: true)?.sighting)
        #expect(leaving.kind == .leaving)
    }

    @Test func aLinkLocalAddressTakesTheInterfaceAvahiHeardItOn() throws {
        let sighting = try #require(
            AvahiAPI.found(
                resolved: resolved(address: "fe80::1", interface: 1),
                interval: .seconds(40))?.sighting)
        guard case .v6(let address) = sighting.address else {
            Issue.record("not IPv6: \(sighting.address)")
            return
        }
        #expect(address.scope == 1 && address.isLinkLocal)
        #expect(AvahiAPI.found(resolved: resolved(address: "fe80::1", interface: -1), interval: .seconds(40)) == nil)
        let global = try #require(
            AvahiAPI.found(resolved: resolved(address: "2001:db8::1"), interval: .seconds(1))?.sighting)
        #expect(global.address == IPAddress("2001:db8::1"))
    }

    @Test func aResolveWithoutAnIDAPortOrAnAddressIsNoSighting() {
        #expect(AvahiAPI.found(resolved: resolved(txt: ["v=2.0.0"]), interval: .seconds(1))?.sighting == nil)
        #expect(AvahiAPI.found(resolved: resolved(txt: ["id=not-a-uuid"]), interval: .seconds(1))?.sighting == nil)
        #expect(AvahiAPI.found(resolved: resolved(port: 0), interval: .seconds(1))?.sighting == nil)
        #expect(AvahiAPI.found(resolved: resolved(address: "ada.local"), interval: .seconds(1)) == nil)
        #expect(AvahiAPI.found(resolved: Array(resolved().prefix(10)), interval: .seconds(1)) == nil)
        var wrongType = resolved()
        wrongType[8] = .uint32(18_521)
        #expect(AvahiAPI.found(resolved: wrongType, interval: .seconds(1)) == nil)
    }
}
