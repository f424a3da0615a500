import HexCarrier

/// How this daemon takes part in DNS-SD: with its own responder, through Avahi, or not at all
/// (and why), for the daemon to run and stop it and for `status` to say.
enum DNSSDState: Sendable {
    case own(DNSSDService)
    case avahi(AvahiService)
    case off(String)

    /// What runs beside the daemon's other services, if anything.
    var service: (any DaemonService)? {
        switch self {
        case .own(let service): service
        case .avahi(let service): service
        case .off: nil
        }
    }

    var summary: String {
        get async {
            switch self {
            case .own(let service): await service.summary
            case .avahi(let service): await service.summary
            case .off(let why): "off: " + why
            }
        }
    }

    /// Acts on a change of the daemon's visibility, returning once it has: hidden, no browser
    /// finds this daemon any more.
    func followVisibility() async {
        switch self {
        case .own(let service): await service.visibilityChanged()
        case .avahi(let service): await service.reconcile()
        case .off: return
        }
    }

    /// Says goodbye for this daemon's instance, so that browsers drop it at once.
    func sayGoodbye() async {
        switch self {
        case .own(let service): await service.sayGoodbye()
        case .avahi(let service): await service.sayGoodbye()
        case .off: return
        }
    }
}

extension DNSSDState: CarrierDNSSD {
    func publish(_ persona: DNSSDPersona) async {
        switch self {
        case .own(let service): await service.publish(persona)
        case .avahi(let service): await service.publish(persona)
        case .off: return
        }
    }

    func browse(_ type: String, found: @escaping @Sendable (DNSSDFound) async -> Void) async {
        switch self {
        case .own(let service): await service.browse(type, found: found)
        case .avahi(let service): await service.browse(type, found: found)
        case .off: return
        }
    }
}
