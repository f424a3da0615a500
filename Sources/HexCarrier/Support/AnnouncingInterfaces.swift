import HexNet

extension DiscoverySettings {
    /// The interfaces other protocols' announcements (LocalSend's, KDE Connect's) go out on: where
    /// beacons go. With `--broadcast`, those whose subnet's broadcast address is named (loopback's
    /// too: 127.255.255.255 keeps every announcement on this host); else every interface up, chosen
    /// by `--interface` and `--exclude-interface`, loopback aside.
    package func announcingInterfaces(of addresses: [NetworkInterfaces.Address]) -> [String] {
        var chosen: [String] = []
        if broadcastAddresses.isEmpty {
            let targets = NetworkInterfaces.targets(of: addresses, selection: interfaces)
            chosen = targets.filter { $0.broadcast != nil }.map(\.interface)
        } else {
            chosen = addresses.filter {
                $0.isUp && $0.subnetBroadcast.map(broadcastAddresses.contains) == true
            }.map(\.interface)
        }
        var seen = Set<String>()
        return chosen.filter { seen.insert($0).inserted }
    }

    /// The broadcast addresses of those interfaces' subnets: where KDE Connect's identity goes.
    package func announcingBroadcasts(of addresses: [NetworkInterfaces.Address]) -> [IPv4Address] {
        let chosen = Set(announcingInterfaces(of: addresses))
        var seen = Set<IPv4Address>()
        return addresses.filter { chosen.contains($0.interface) }.compactMap(\.subnetBroadcast)
            .filter { (broadcastAddresses.isEmpty || broadcastAddresses.contains($0)) && seen.insert($0).inserted }
    }
}
