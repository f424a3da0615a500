import HexCarrier
import HexNet
import Testing

/// Where LocalSend announcements go is where beacons go: one setting for every kind of peer.
@Suite(.timeLimit(.minutes(1))) struct LocalSendInterfacesTests {
    private static func address(
        _ interface: String, _ text: String, mask: String = "255.255.255.0", loopback: Bool = false, up: Bool = true
    )
        -> NetworkInterfaces.Address
    {
        NetworkInterfaces.Address(
            interface: interface, address: IPv4Address(text) ?? .any, netmask: IPv4Address(mask) ?? .any,
            broadcast: nil, isUp: up, isLoopback: loopback)
    }

    private static let host = [
        address("lo", "127.0.0.1", mask: "255.0.0.0", loopback: true), address("eth0", "192.168.1.20"),
        address("wlan0", "10.0.0.5"), address("docker0", "172.17.0.1", mask: "255.255.0.0"),
        address("eth1", "192.168.7.3", up: false),
    ]

    @Test func byDefaultEveryInterfaceUpButLoopback() {
        #expect(
            DiscoverySettings().announcingInterfaces(of: Self.host) == ["eth0", "wlan0", "docker0"])
        var chosen = DiscoverySettings()
        chosen.interfaces = NetworkInterfaces.Selection(excluding: ["docker*"])
        #expect(chosen.announcingInterfaces(of: Self.host) == ["eth0", "wlan0"])
        chosen.interfaces = NetworkInterfaces.Selection(including: ["wlan0"])
        #expect(chosen.announcingInterfaces(of: Self.host) == ["wlan0"])
    }

    @Test func broadcastAddressesNameTheInterfacesLoopbackIncluded() {
        var loopbackOnly = DiscoverySettings()
        loopbackOnly.broadcastAddresses = [IPv4Address(127, 255, 255, 255)]
        #expect(
            loopbackOnly.announcingInterfaces(of: Self.host) == ["lo"],
            "a daemon told to announce on loopback sends nothing anywhere else")
        var lan = DiscoverySettings()
        lan.broadcastAddresses = [IPv4Address(192, 168, 1, 255), IPv4Address(192, 168, 7, 255)]
        #expect(lan.announcingInterfaces(of: Self.host) == ["eth0"], "eth1 is down")
    }
}
