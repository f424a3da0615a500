import HexCarrier
import HexDNS
import HexKit
import HexNet

/// What DNS-SD responses say about the instances of one service type (`_hexd._tcp`, whose become
/// sightings for the peer directory, or a carrier's): pure bookkeeping, fed responses and the clock.
///
/// An instance is found once its SRV (the port) and its TXT (the keys) are known; the
/// address is where the response came from, with its zone (mDNS answers come from the publisher,
/// and a link-local one is only dialable with it). A PTR or SRV with TTL 0 is a goodbye. At most
/// `capacity` instances are kept, the stalest dropped first, so that a flood of invented ones
/// cannot grow it.
struct DNSSDBrowser {
    /// What is known of one instance.
    private struct Instance {
        var port: UInt16?
        var keys: [String: String]?
        var ttl: UInt32 = DNSSDAdvert.hostTTL
        var lastSeen: ContinuousClock.Instant
    }

    let service: DNSName
    let capacity: Int
    private var instances: [DNSName: Instance] = [:]

    init(service: DNSName, capacity: Int = 256) {
        self.service = service
        self.capacity = capacity
    }

    /// What `response`, from `address`, says: each instance it completes or refreshes, and each
    /// that said goodbye.
    mutating func take(_ response: DNSMessage, from address: IPAddress, at now: ContinuousClock.Instant)
        -> [DNSSDFound]
    {
        var touched: [DNSName] = []
        var leaving: [DNSSDFound] = []
        for record in response.records where record.name.isChild(of: service) || record.name == service {
            let name: DNSName
            switch record.data {
            case .ptr(let target) where record.name == service:
                name = target
            case .srv, .txt:
                name = record.name
            default:
                continue
            }
            guard name.isChild(of: service), touched.contains(name) || touched.count < Self.maximumPerResponse
            else { continue }
            if record.ttl == 0 {
                if let gone = instances.removeValue(forKey: name),
                    let found = found(gone, name: name, from: address, leaving: true)
                {
                    leaving.append(found)
                }
                continue
            }
            var instance = instances[name] ?? Instance(lastSeen: now)
            instance.lastSeen = now
            switch record.data {
            case .srv(_, _, let port, _):
                instance.port = port
                instance.ttl = min(instance.ttl, record.ttl)
            case .txt:
                instance.keys = record.data.keyValues
            default:
                break
            }
            keep(instance, as: name)
            if !touched.contains(name) { touched.append(name) }
        }
        return leaving
            + touched.compactMap { name in
                instances[name].flatMap { found($0, name: name, from: address, leaving: false) }
            }
    }

    /// The instances heard from within `knownFor`, as the known answers a query lists so that
    /// they are not sent again (RFC 6762, section 7.1). The others are left out, so that the next
    /// query (a minute apart at most) refreshes them before their sightings expire.
    func knownAnswers(at now: ContinuousClock.Instant) -> [DNSRecord] {
        instances.filter { now - $0.value.lastSeen < Self.knownFor }.keys.map {
            DNSRecord(name: service, data: .ptr($0), ttl: DNSSDAdvert.otherTTL / 2 + 1)
        }
    }

    static let knownFor: Duration = .seconds(30)
    /// Instances taken from one response: a 9000-byte response could name hundreds.
    static let maximumPerResponse = 16

    private mutating func keep(_ instance: Instance, as name: DNSName) {
        if instances[name] == nil, instances.count >= capacity,
            let stalest = instances.min(by: { $0.value.lastSeen < $1.value.lastSeen })
        {
            instances[stalest.key] = nil
        }
        instances[name] = instance
    }

    private func found(_ instance: Instance, name: DNSName, from address: IPAddress, leaving: Bool) -> DNSSDFound? {
        guard let keys = instance.keys else { return nil }
        // Expired three of these after the last response: when its records' lifetime is over.
        let interval = Duration.seconds(Double(max(instance.ttl, 3)) / 3)
        return DNSSDFound(
            name: name.firstLabel, keys: keys, address: address,
            port: leaving ? instance.port ?? 0 : instance.port, interval: interval, leaving: leaving)
    }
}

extension Sighting {
    /// The sighting a DNS-SD instance makes, from its name, its TXT keys and where it was heard
    /// (hexd's own browser and Avahi's alike); nil when the keys name no peer ID, or when a
    /// present instance has no port (a beacon's rules: no port 0, a version within its cap).
    init?(
        dnssdInstance name: String, keys: [String: String], address: IPAddress, port: UInt16?, interval: Duration,
        leaving: Bool
    ) {
        guard let id = keys["id"], let peer = UUID(uuidString: id), let port, leaving || port > 0 else { return nil }
        self.init(
            kind: leaving ? .leaving : .present, uuid: peer.uppercaseText, name: name,
            versionID: (keys["v"] ?? "").clipped(toUTF8: Beacon.maximumVersionBytes),
            instance: (keys["in"] ?? "").clipped(toUTF8: 64), address: address, port: port,
            interval: interval, capabilities: peer.uppercaseText.isKeyDerivedID ? ["ack", "tls"] : [],
            fingerprint: nil, isSigned: false)
    }
}
