import HexCarrier

/// DNS-SD that publishes and browses nothing, for carriers a test tells of each device itself.
struct NoDNSSD: CarrierDNSSD {
    func publish(_ persona: DNSSDPersona) async {}
    func browse(_ type: String, found: @escaping @Sendable (DNSSDFound) async -> Void) async {}
}
