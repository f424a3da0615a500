import HexCarrier

extension DNSSDFound {
    /// The sighting an instance of `_hexd._tcp` makes for the peer directory.
    var sighting: Sighting? {
        Sighting(dnssdInstance: name, keys: keys, address: address, port: port, interval: interval, leaving: leaving)
    }
}
