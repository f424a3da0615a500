import Glibc
import Testing

@testable import HexNet

/// Addresses of both families as users write them and as sockets report them.
@Suite(.timeLimit(.minutes(5))) struct IPAddressTests {
    @Test func addressesReadBackAsWritten() throws {
        for text in ["192.168.1.20", "fd00::2", "::1", "fe80::1%lo", "2001:db8::8:800:200c:417a"] {
            #expect(IPAddress(text)?.description == text, "\(text)")
        }
        #expect(IPAddress("fe80::1%1")?.description == "fe80::1%lo", "a zone by index is shown by name")
        #expect(IPAddress("FD00:0:0::2")?.description == "fd00::2")
        for text in ["", "laptop.local", "fe80::1%", "fe80::1%no-such-interface", "192.168.1", "::1::2", "[::1]"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        let scoped = try #require(IPv6Address("fe80::1%lo"))
        #expect(scoped.isLinkLocal && scoped.scope == if_nametoindex("lo") && !IPv6Address.loopback.isLinkLocal)
        #expect(IPAddress.loopback.isLoopback && IPAddress.loopbackV6.isLoopback && IPAddress("127.9.9.9")!.isLoopback)
        #expect(!IPAddress("fd00::2")!.isLoopback)
    }

    @Test func anIPv4MappedAddressIsTheIPv4AddressItCarries() throws {
        let mapped = try #require(IPv6Address("::ffff:192.0.2.1"))
        #expect(IPAddress(unmapping: mapped) == IPAddress("192.0.2.1"))
        #expect(IPAddress(unmapping: IPv6Address.loopback) == .loopbackV6)
    }

    @Test func endpointsBracketIPv6AndSayHowToWriteOneThatIsNot() throws {
        let cases: [(String, String, UInt16)] = [
            ("192.168.1.20:18521", "192.168.1.20", 18521), ("laptop.local:9", "laptop.local", 9),
            ("[fd00::2]:18521", "fd00::2", 18521), ("[fe80::1%lo]:7", "fe80::1%lo", 7),
        ]
        for (text, host, port) in cases {
            let endpoint = try #require(Endpoint(parsing: text), "\(text)")
            #expect(endpoint.host == host && endpoint.port == port && endpoint.description == text)
        }
        for text in ["fd00::2:18521", "[fd00::2]", "[fd00::2]:0", "[laptop]:9", "[]:9", "[fd00::2:9", ":9", "a:b"] {
            #expect(Endpoint(parsing: text) == nil, "\(text)")
        }
        #expect(Endpoint.bracketed("fd00::2:18521", defaultPort: 1) == "[fd00::2]:18521")
        #expect(Endpoint.bracketed("fe80::1%lo", defaultPort: 18521) == "[fe80::1%lo]:18521")
        #expect(Endpoint.bracketed("[fd00::2]:9", defaultPort: 1) == nil)
        #expect(Endpoint.bracketed("192.168.1.20:18521", defaultPort: 1) == nil)
        #expect(Endpoint.bracketed("laptop", defaultPort: 1) == nil)
    }

    /// An IPv6 listener beside an IPv4 one on the same port, each taking its own family, and
    /// each connection's far end as the socket reports it.
    @Test func listenersOfBothFamiliesShareAPort() async throws {
        let ipv4 = try StreamListener.tcp(address: .loopback, port: 0)
        let ipv6 = try StreamListener.tcp(address: .loopbackV6, port: ipv4.port)
        async let acceptedV6 = ipv6.accept()
        let client = try await StreamConnector.tcp(
            to: try #require(Endpoint(parsing: "[::1]:\(ipv4.port)")),
            timeout: .seconds(5))
        let server = try await acceptedV6
        #expect(server.remoteEndpoint?.host == "::1" && server.remoteEndpoint?.description.hasPrefix("[::1]:") == true)
        #expect(client.remoteEndpoint?.description == "[::1]:\(ipv4.port)")
        async let acceptedV4 = ipv4.accept()
        let other = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: ipv4.port),
            timeout: .seconds(5))
        #expect(try await acceptedV4.remoteEndpoint?.host == "127.0.0.1")
        withExtendedLifetime((client, other)) {}
    }

    /// IPv6 beacons go to the group on each link that is up, not loopback, takes multicast and is
    /// selected, the group scoped to that link; every other link is skipped with why.
    @Test func everyIPv6LinkIsAnnouncedOnOrSkippedWithWhy() throws {
        func link(
            _ name: String, _ index: UInt32, up: Bool = true, loopback: Bool = false,
            multicast: Bool = true
        ) throws -> NetworkInterfaces.IPv6Link {
            let address = try #require(IPv6Address("fe80::\(index)"))
            return NetworkInterfaces.IPv6Link(
                interface: name, index: index, address: address, isUp: up,
                isLoopback: loopback, isMulticast: multicast)
        }
        let links = [
            try link("lo", 1, loopback: true), try link("eth0", 2), try link("wlan0", 3, up: false),
            try link("tun0", 4, multicast: false), try link("docker0", 5), try link("eth1", 6),
        ]
        let group = try #require(IPv6Address("ff02::4865:7864"))
        let plan = NetworkInterfaces.multicastTargets(
            of: links, group: group,
            selection: .init(excluding: ["docker*"]))
        #expect(plan.map { $0.skipped ?? "" } == ["loopback", "", "down", "no multicast", "excluded by 'docker*'", ""])
        #expect(
            plan.compactMap(\.broadcast) == [
                .v6(IPv6Address(bytes: group.bytes, scope: 2)),
                .v6(IPv6Address(bytes: group.bytes, scope: 6)),
            ])
        let named = NetworkInterfaces.multicastTargets(of: links, group: group, selection: .init(including: ["eth1"]))
        #expect(named.filter { $0.broadcast != nil }.map(\.interface) == ["eth1"])
        #expect(named.first { $0.interface == "eth0" }?.skipped == "not among the interfaces named")
    }
}
