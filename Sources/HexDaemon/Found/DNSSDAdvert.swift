import HexCarrier
import HexDNS
import HexKit
import HexNet

/// What this daemon publishes by DNS-SD (RFC 6763) and how it answers mDNS questions (RFC 6762):
/// pure, so that every answer can be checked without sockets.
///
/// The service `_hexd._tcp.local.` has one instance, named as the user named the daemon, on a
/// host name of hexd's own (`hexd-<the ID's first 8 digits>.local.`, never the machine's, which
/// belongs to the system's responder). Its TXT record holds the peer ID, the protocol version,
/// the start's instance and the first 16 digits of the certificate's fingerprint, well under 200
/// bytes. The carriers' services (`DNSSDPersona`) are published beside it, on the same host name.
struct DNSSDAdvert: Sendable {
    /// A carrier's service as records: its type, its instance under it, and what they hold.
    struct PersonaRecords: Sendable {
        let persona: DNSSDPersona
        let type: DNSName
        let instance: DNSName
    }

    static let serviceType = ["_hexd", "_tcp", "local"]
    /// Where DNS-SD browsers that list every service ask (RFC 6763, section 9).
    static let servicesType = ["_services", "_dns-sd", "_udp", "local"]
    /// RFC 6762, section 10: records naming a host live 120 s, the others 75 minutes.
    static let hostTTL: UInt32 = 120
    static let otherTTL: UInt32 = 4_500

    let service: DNSName
    let services: DNSName
    private(set) var instance: DNSName
    let host: DNSName
    let port: UInt16
    /// The TXT record's strings (`key=value`).
    let txtStrings: [[UInt8]]
    let txt: DNSRecordData
    /// The carriers' services published beside `_hexd._tcp`, one of each type.
    private(set) var personas: [PersonaRecords] = []

    /// - Parameter name: the instance's name; cut to 63 bytes (one DNS label).
    /// - Parameter start: this start's instance, as beacons carry it: a new one is a restart.
    init(
        name: String, peerID: String, versionID: String, start: String, fingerprint: String?,
        port: UInt16
    ) throws(DNSError) {
        service = try DNSName(labels: Self.serviceType.map { Array($0.utf8) })
        services = try DNSName(labels: Self.servicesType.map { Array($0.utf8) })
        instance = try Self.instanceName(name, service: service)
        host = try DNSName(labels: [Array("hexd-\(peerID.prefix(8).lowercased())".utf8), Array("local".utf8)])
        self.port = port
        var pairs = ["id=\(peerID)", "v=\(versionID.clipped(toUTF8: 20))", "in=\(start)"]
        if let fingerprint { pairs.append("fp=\(fingerprint.prefix(16))") }
        txtStrings = pairs.map { Array($0.utf8) }
        txt = .txt(txtStrings)
    }

    /// The same advert under another instance name (after a conflict: "Ada (2)").
    func renamed(_ name: String) throws(DNSError) -> DNSSDAdvert {
        var copy = self
        copy.instance = try Self.instanceName(name, service: service)
        return copy
    }

    /// The advert with `persona` published too, in place of one of its type.
    func publishing(_ persona: DNSSDPersona) throws(DNSError) -> DNSSDAdvert {
        var copy = self
        let type = try DNSSDPersona.name(ofType: persona.type)
        let instance = try DNSName(labels: [Array(persona.name.utf8)]).appending(type)
        copy.personas.removeAll { $0.type == type }
        copy.personas.append(PersonaRecords(persona: persona, type: type, instance: instance))
        return copy
    }

    private static func instanceName(_ name: String, service: DNSName) throws(DNSError) -> DNSName {
        let label = Array(name.clipped(toUTF8: DNSName.maximumLabelBytes).utf8)
        return try DNSName(labels: [label.isEmpty ? Array("hexd".utf8) : label]).appending(service)
    }

    /// The records that are this daemon's alone (announced with the cache-flush bit), for the
    /// host `addresses`.
    func uniqueRecords(addresses: [IPAddress]) -> [DNSRecord] {
        instanceRecords(instance, port: port, txt: txt)
            + personas.flatMap {
                instanceRecords($0.instance, port: $0.persona.port, txt: .txt($0.persona.txtStrings))
            } + hostRecords(addresses: addresses)
    }

    /// An instance's SRV (on this advert's host) and TXT records.
    private func instanceRecords(_ name: DNSName, port: UInt16, txt: DNSRecordData) -> [DNSRecord] {
        [
            DNSRecord(
                name: name, data: .srv(priority: 0, weight: 0, port: port, target: host), ttl: Self.hostTTL,
                cacheFlush: true),
            DNSRecord(name: name, data: txt, ttl: Self.otherTTL, cacheFlush: true),
        ]
    }

    /// The host name's address records, for `addresses`.
    private func hostRecords(addresses: [IPAddress]) -> [DNSRecord] {
        addresses.map { DNSRecord(name: host, data: $0.recordData, ttl: Self.hostTTL, cacheFlush: true) }
    }

    /// The records shared with other publishers of the service types.
    var sharedRecords: [DNSRecord] {
        let published = [(service, instance)] + personas.map { ($0.type, $0.instance) }
        return published.flatMap { type, instance in
            [
                DNSRecord(name: type, data: .ptr(instance), ttl: Self.otherTTL),
                DNSRecord(name: services, data: .ptr(type), ttl: Self.otherTTL),
            ]
        }
    }

    /// Every record, as an announcement (or, with `ttl` 0, a goodbye) carries them.
    func announcement(addresses: [IPAddress], ttl: UInt32? = nil) -> DNSMessage {
        let records = sharedRecords + uniqueRecords(addresses: addresses)
        return DNSMessage(
            flags: DNSMessage.responseFlag | DNSMessage.authoritativeFlag,
            answers: ttl.map { ttl in records.map { $0.with(ttl: ttl) } } ?? records)
    }

    /// A probe for the instance and host names (RFC 6762, section 8.1): questions of type ANY,
    /// the records it would publish in the authority section.
    func probe(addresses: [IPAddress], unicastResponse: Bool) -> DNSMessage {
        DNSMessage(
            questions: [instance, host].map {
                DNSQuestion(name: $0, type: DNSType.any, unicastResponse: unicastResponse)
            }, authorities: uniqueRecords(addresses: addresses))
    }

    /// The answers to `query` and the records worth adding to them (RFC 6763, section 12),
    /// leaving out what the query says it knows with at least half its lifetime left (RFC 6762,
    /// section 7.1). Nothing for a query it has no answer to.
    func answers(to query: DNSMessage, addresses: [IPAddress]) -> (answers: [DNSRecord], additionals: [DNSRecord]) {
        let unique = uniqueRecords(addresses: addresses)
        let all = sharedRecords + unique
        var answers: [DNSRecord] = []
        for question in query.questions where question.recordClass == DNSClass.internet {
            for record in all where question.isAnswered(by: record) && !answers.contains(record) {
                let known = query.answers.contains { $0.isSameRecord(as: record) && $0.ttl >= record.ttl / 2 }
                if !known { answers.append(record) }
            }
        }
        guard !answers.isEmpty else { return ([], []) }
        // A pointer to an instance brings its SRV, TXT and the host's addresses; an SRV the
        // addresses (RFC 6763, section 12).
        var additionals: [DNSRecord] = []
        for case .ptr(let pointed) in answers.map(\.data) {
            additionals += unique.filter { $0.name == pointed && !additionals.contains($0) }
        }
        if answers.contains(where: { $0.type == DNSType.srv }) || !additionals.isEmpty {
            additionals += hostRecords(addresses: addresses)
        }
        return (answers, additionals.filter { extra in !answers.contains(extra) })
    }

    /// Whether `probe` proposes for this advert's names only records this host proposes itself on
    /// one of its links (`addresses`, all of them): its own probe, heard again on another of its
    /// interfaces on the same link (a laptop on Ethernet and Wi-Fi to one LAN). That is no other
    /// host, and no tie to break (RFC 6762, 8.2, compares the probes of two hosts); taken for one,
    /// the records of one interface lose to the other's and the host probes again every second,
    /// for ever, never publishing.
    func isOwnProbe(_ probe: DNSMessage, addresses: [IPAddress]) -> Bool {
        let theirs = probe.authorities.filter { $0.name == instance || $0.name == host }
        let ours = uniqueRecords(addresses: addresses)
        return !theirs.isEmpty && theirs.allSatisfy { record in ours.contains { $0.isSameRecord(as: record) } }
    }

    /// Whether `record` (heard from another responder) claims one of this advert's unique names
    /// with other data: a conflict (RFC 6762, section 9).
    func conflicts(with record: DNSRecord, addresses: [IPAddress]) -> Bool {
        guard record.name == instance || record.name == host, record.ttl > 0 else { return false }
        guard record.type == DNSType.srv || record.type == DNSType.txt || record.name == host else { return false }
        return !uniqueRecords(addresses: addresses).contains { $0.isSameRecord(as: record) }
    }
}

extension IPAddress {
    /// This address as an A or AAAA record's data (without its zone).
    var recordData: DNSRecordData {
        switch self {
        case .v4(let address): .a(address.bytes)
        case .v6(let address): .aaaa(address.unscoped.bytes)
        }
    }
}
