import HexDNS
import HexKit
import HexNet
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// What hexd publishes by DNS-SD and what it learns from it, without sockets (the netns test
/// `dnssd.sh` runs both against python-zeroconf).
@Suite(.timeLimit(.minutes(5))) struct DNSSDTests {
    static let id = "6F9619FF-8B86-8011-B42D-00C04FC964FF"
    private let addresses = [IPAddress("10.0.0.7"), IPAddress("fe80::1%lo")].compactMap { $0 }

    private func advert(_ name: String = "Ada") throws -> DNSSDAdvert {
        try DNSSDAdvert(
            name: name, peerID: Self.id, versionID: "2.0.0", start: "I1",
            fingerprint: String(repeating: "ab", count: 32), port: 18_521)
    }

    @Test func aBrowseQueryIsAnsweredWithThePointerAndWhatItNeeds() throws {
        let advert = try advert()
        let query = DNSMessage(questions: [DNSQuestion(name: advert.service, type: DNSType.ptr)])
        let (answers, additionals) = advert.answers(to: query, addresses: addresses)
        #expect(answers == [DNSRecord(name: advert.service, data: .ptr(advert.instance), ttl: 4_500)])
        #expect(additionals.map(\.type).sorted() == [DNSType.a, DNSType.txt, DNSType.aaaa, DNSType.srv].sorted())
        #expect(additionals.first { $0.type == DNSType.txt }?.data.keyValues?["id"] == Self.id)
        #expect(advert.host.description == "hexd-6f9619ff.local.")
        let encodedTXT = try DNSMessage(answers: additionals.filter { $0.type == DNSType.txt }).encoded()
        #expect(encodedTXT.count < 200 + 60, "the TXT record stays small")
    }

    /// KDE Connect's `_kdeconnect._udp`, published beside `_hexd._tcp` on hexd's host: a browse
    /// for it is answered with its pointer, its SRV, TXT and the host's addresses; it is listed
    /// among the service types, announced and said goodbye with the rest; a browser of its type
    /// finds it with its keys.
    @Test func aCarriersServiceIsPublishedBesideHexds() throws {
        let persona = DNSSDPersona(
            type: "_kdeconnect._udp", name: "0123456789abcdef0123456789abcdef", port: 1_716,
            txt: [("id", "0123456789abcdef0123456789abcdef"), ("name", "Ada"), ("type", "desktop"), ("protocol", "8")])
        let advert = try advert().publishing(persona).publishing(persona)
        #expect(advert.personas.count == 1, "one of each type")
        let type = try DNSName("_kdeconnect", "_udp", "local")
        let instance = try DNSName("0123456789abcdef0123456789abcdef").appending(type)
        let (answers, additionals) = advert.answers(
            to: DNSMessage(questions: [DNSQuestion(name: type, type: DNSType.ptr)]), addresses: addresses)
        #expect(answers == [DNSRecord(name: type, data: .ptr(instance), ttl: 4_500)])
        #expect(additionals.map(\.type).sorted() == [DNSType.a, DNSType.txt, DNSType.aaaa, DNSType.srv].sorted())
        #expect(additionals.allSatisfy { $0.name == instance || $0.name == advert.host }, "nothing of _hexd._tcp")
        let types = advert.answers(
            to: DNSMessage(questions: [DNSQuestion(name: advert.services, type: DNSType.ptr)]), addresses: addresses)
        #expect(types.answers.map(\.data) == [.ptr(advert.service), .ptr(type)])
        var browser = DNSSDBrowser(service: type)
        let source = try #require(IPAddress("10.0.0.7"))
        let found = browser.take(advert.announcement(addresses: addresses), from: source, at: .now)
        #expect(found.map(\.name) == ["0123456789abcdef0123456789abcdef"] && found.first?.port == 1_716)
        #expect(
            found.first?.keys == [
                "id": "0123456789abcdef0123456789abcdef", "name": "Ada", "type": "desktop", "protocol": "8",
            ])
        #expect(found.first?.sighting == nil, "no hexd peer")
        let goodbye = browser.take(advert.announcement(addresses: addresses, ttl: 0), from: source, at: .now)
        #expect(goodbye.map(\.leaving) == [true])
    }

    @Test func aKnownAnswerWithHalfItsLifetimeIsNotSentAgain() throws {
        let advert = try advert()
        let pointer = DNSRecord(name: advert.service, data: .ptr(advert.instance), ttl: 4_500)
        let question = DNSQuestion(name: advert.service, type: DNSType.ptr)
        let fresh = DNSMessage(questions: [question], answers: [pointer.with(ttl: 3_000)])
        #expect(advert.answers(to: fresh, addresses: addresses).answers.isEmpty)
        let stale = DNSMessage(questions: [question], answers: [pointer.with(ttl: 1_000)])
        #expect(advert.answers(to: stale, addresses: addresses).answers == [pointer])
        let other = DNSMessage(questions: [
            DNSQuestion(
                name: try DNSName("_other", "_tcp", "local"),
                type: DNSType.ptr)
        ])
        #expect(advert.answers(to: other, addresses: addresses).answers.isEmpty, "not hexd's question")
    }

    @Test func anotherResponderWithOurNameIsAConflictAndOurOwnRecordsAreNot() throws {
        let advert = try advert()
        for record in advert.uniqueRecords(addresses: addresses) {
            #expect(!advert.conflicts(with: record, addresses: addresses))
        }
        let theirs = DNSRecord(
            name: advert.instance,
            data: .srv(
                priority: 0, weight: 0, port: 9,
                target: try DNSName("other", "local")), ttl: 120)
        #expect(advert.conflicts(with: theirs, addresses: addresses))
        #expect(!advert.conflicts(with: theirs.with(ttl: 0), addresses: addresses), "a goodbye claims nothing")
        let renamed = try advert.renamed("Ada (2)")
        #expect(renamed.instance.firstLabel == "Ada (2)" && !renamed.conflicts(with: theirs, addresses: addresses))
    }

    /// A host on two interfaces of one link hears its own probe on the other, proposing that
    /// interface's addresses: its own, no other host's, whichever records would win the tie-break.
    @Test func aProbeOfThisHostsOwnRecordsOnAnotherInterfaceIsItsOwn() throws {
        let advert = try advert()
        let first = [IPAddress("10.0.0.7"), IPAddress("fe80::1%eth0")].compactMap { $0 }
        let second = [IPAddress("10.0.0.8"), IPAddress("fe80::2%wlan0")].compactMap { $0 }
        let heardAgain = advert.probe(addresses: second, unicastResponse: false)
        #expect(advert.isOwnProbe(heardAgain, addresses: first + second))
        #expect(!advert.isOwnProbe(heardAgain, addresses: first), "an address not this host's is another host's")
        let other = try DNSSDAdvert(
            name: "Ada", peerID: "7F9619FF-8B86-8011-B42D-00C04FC964FF", versionID: "2.0.0", start: "I1",
            fingerprint: String(repeating: "cd", count: 32), port: 18_521)
        let sameName = other.probe(addresses: first, unicastResponse: false)
        #expect(!advert.isOwnProbe(sameName, addresses: first + second), "another host's records for the name")
        #expect(!advert.isOwnProbe(DNSMessage(questions: heardAgain.questions), addresses: first), "no records")
    }

    @Test func aQueryIsAnsweredWithTheAddressesOfTheLinkItCameOn() throws {
        func target(_ interface: String, _ address: String) throws -> NetworkInterfaces.Target {
            let address = try #require(IPAddress(address))
            return NetworkInterfaces.Target(interface: interface, address: address, broadcast: address)
        }
        let targets = [
            try target("eth0", "10.0.0.7"), try target("eth0", "fe80::1%1"),
            try target("lo", "192.168.1.5"), try target("lo", "fe80::2%2"),
        ]
        let networks = try [("eth0", "10.0.0.7"), ("lo", "192.168.1.5")].map { name, text in
            NetworkInterfaces.Address(
                interface: name, address: try #require(IPv4Address(text)),
                netmask: try #require(IPv4Address("255.255.255.0")), broadcast: nil)
        }
        func answer(_ sender: String) throws -> [IPAddress] {
            DNSSDService.addresses(of: targets, onLinkOf: try #require(IPAddress(sender)), networks: networks)
        }
        #expect(try answer("192.168.1.9") == [targets[2].address, targets[3].address])
        #expect(try answer("fe80::9%1") == [targets[0].address, targets[1].address])
        #expect(try answer("172.16.0.1") == targets.map(\.address), "no interface found: every address")
    }

    @Test func aSourceIsOnLinkByItsPrefixNotOnlyWhenItIsLinkLocal() throws {
        // eth0 (index 1): 10.0.0.7/24, fd77::7/64 and its link-local address; lo (index 2): ::1/128.
        let networks = [
            NetworkInterfaces.Address(
                interface: "eth0", address: try #require(IPv4Address("10.0.0.7")),
                netmask: try #require(IPv4Address("255.255.255.0")), broadcast: nil)
        ]
        let prefixes = try [("eth0", 1, "fd77::7", 64), ("eth0", 1, "fe80::7", 64), ("lo", 2, "::1", 128)].map {
            NetworkInterfaces.IPv6Prefix(
                interface: $0.0, index: UInt32($0.1), address: try #require(IPv6Address($0.2)), length: $0.3)
        }
        func onLink(_ text: String, hopLimit: Int? = 64, interface: UInt32? = 1) throws -> String? {
            DNSSDService.onLink(
                try #require(IPAddress(text)), hopLimit: hopLimit, interface: interface, networks: networks,
                prefixes: prefixes
            )
            .map { sender, byHopLimit in
                let text =
                    if case .v6(let address) = sender { "\(address.bytes)%\(address.scope)" } else { "\(sender)" }
                return byHopLimit ? text + " by its hop limit" : text
            }
        }
        func scoped(_ text: String, _ scope: UInt32) throws -> String {
            "\(try #require(IPv6Address(text)).bytes)%\(scope)"
        }
        #expect(try onLink("fe80::9%1") == scoped("fe80::9", 1), "link-local: on the link its zone names")
        #expect(try onLink("fd77::3") == scoped("fd77::3", 1), "an on-link ULA, given the zone of its link")
        #expect(try onLink("fd77::ffff:3") == scoped("fd77::ffff:3", 1))
        #expect(try onLink("fd78::3") == nil, "a ULA of another prefix is off-link")
        #expect(try onLink("2001:db8::1") == nil, "a routed source is off-link")
        #expect(try onLink("fd77::3%2") == nil, "within eth0's prefix, but heard on lo")
        #expect(try onLink("10.0.0.200") == "10.0.0.200" && onLink("10.0.1.1") == nil)
        // Hop limit 255: sent on the link, whatever its address (no router passes it on as such).
        #expect(
            try onLink("fd78::3", hopLimit: 255, interface: 2) == scoped("fd78::3", 2) + " by its hop limit",
            "a host on the link it came in on, of no prefix here")
        #expect(try onLink("10.0.1.1", hopLimit: 255) == "10.0.1.1 by its hop limit")
        #expect(try onLink("10.0.1.1", hopLimit: 254) == nil && onLink("10.0.1.1", hopLimit: nil) == nil)
        #expect(try onLink("10.0.1.1", hopLimit: 255, interface: nil) == nil, "no link to answer it on")
        #expect(try onLink("fd77::3", hopLimit: 1) == scoped("fd77::3", 1), "within a prefix, any hop limit")
    }

    @Test func aPrefixHoldsTheAddressesThatShareItsFirstBits() throws {
        let address = try #require(IPv6Address("fd77:1234:5678:9abc::1"))
        #expect(try #require(IPv6Address("fd77:1234:5678:9abd::2")).sharesPrefix(of: 63, with: address))
        #expect(try !#require(IPv6Address("fd77:1234:5678:9abd::2")).sharesPrefix(of: 64, with: address))
        #expect(address.sharesPrefix(of: 0, with: .loopback) && !address.sharesPrefix(of: 129, with: address))
        #expect(address.sharesPrefix(of: 128, with: address))
    }

    @Test func aBrowserMakesASightingOnceThePortAndIDAreKnown() throws {
        let advert = try advert()
        var browser = DNSSDBrowser(service: advert.service)
        let source = try #require(IPAddress("fe80::7%lo"))
        let now = ContinuousClock.now
        let pointerOnly = DNSMessage(flags: DNSMessage.responseFlag, answers: [advert.sharedRecords[0]])
        #expect(browser.take(pointerOnly, from: source, at: now).isEmpty, "no port or ID yet")
        let full = advert.announcement(addresses: addresses)
        let sightings = browser.take(full, from: source, at: now).compactMap(\.sighting)
        #expect(sightings.count == 1)
        let sighting = try #require(sightings.first)
        #expect(sighting.uuid == Self.id && sighting.name == "Ada" && sighting.port == 18_521)
        #expect(sighting.address == source && sighting.instance == "I1" && !sighting.isSigned)
        #expect(sighting.kind == .present && sighting.capabilities.contains("tls"))
        #expect(sighting.interval == .seconds(40), "expires with its SRV record, 120 s")
        let goodbye = browser.take(advert.announcement(addresses: addresses, ttl: 0), from: source, at: now)
        #expect(goodbye.compactMap(\.sighting).map(\.kind) == [.leaving])
        #expect(browser.knownAnswers(at: now).isEmpty)
    }

    @Test func anInstanceOnPortZeroOrWithALongVersionIsHeldToABeaconsRules() throws {
        let service = try DNSName("_hexd", "_tcp", "local")
        let instance = try DNSName("Odd").appending(service)
        let source = try #require(IPAddress("10.0.0.9"))
        let txt = DNSRecord(
            name: instance, data: .txt(["id": Self.id, "v": String(repeating: "9", count: 200)]),
            ttl: 120)
        func srv(_ port: UInt16) -> DNSRecord {
            DNSRecord(name: instance, data: .srv(priority: 0, weight: 0, port: port, target: instance), ttl: 120)
        }
        var browser = DNSSDBrowser(service: service)
        #expect(
            browser.take(
                DNSMessage(flags: DNSMessage.responseFlag, answers: [srv(0), txt]), from: source,
                at: .now
            ).compactMap(\.sighting).isEmpty)
        let sighting = browser.take(
            DNSMessage(flags: DNSMessage.responseFlag, answers: [srv(9), txt]),
            from: source, at: .now
        ).first?.sighting
        #expect(sighting?.versionID.utf8.count == Beacon.maximumVersionBytes)
    }

    @Test func oneResponseMakesAtMostSixteenSightings() throws {
        let service = try DNSName("_hexd", "_tcp", "local")
        var browser = DNSSDBrowser(service: service)
        var records: [DNSRecord] = []
        for index in 0..<100 {
            let instance = try DNSName("flood \(index)").appending(service)
            records += [
                DNSRecord(
                    name: instance,
                    data: .srv(
                        priority: 0, weight: 0, port: 1,
                        target: try DNSName("h", "local")), ttl: 120),
                DNSRecord(name: instance, data: .txt(["id": Self.id]), ttl: 120),
            ]
        }
        let sightings = browser.take(
            DNSMessage(flags: DNSMessage.responseFlag, answers: records),
            from: try #require(IPAddress("10.0.0.9")), at: .now)
        #expect(sightings.count == DNSSDBrowser.maximumPerResponse)
    }

    @Test func theBrowserKeepsAtMostItsCapacity() throws {
        let service = try DNSName("_hexd", "_tcp", "local")
        var browser = DNSSDBrowser(service: service, capacity: 8)
        let source = try #require(IPAddress("10.0.0.9"))
        for index in 0..<100 {
            let instance = try DNSName("flood \(index)").appending(service)
            _ = browser.take(
                DNSMessage(
                    flags: DNSMessage.responseFlag,
                    answers: [
                        DNSRecord(name: service, data: .ptr(instance), ttl: 4_500)
                    ]), from: source, at: .now)
        }
        #expect(browser.knownAnswers(at: .now).count == 8)
        #expect(browser.knownAnswers(at: .now + .seconds(31)).isEmpty, "a minute's query refreshes them")
    }

    /// A DNS-SD sighting is a claim: it cannot touch a peer whose beacons are signed beyond adding
    /// an address, and a peer found by it alone is sent to over TLS, proving a key of its ID.
    @Test func aDNSSDClaimNeitherRenamesASignedPeerNorLosesTLS() throws {
        var table = PeerTable(ownUUID: "11111111-1111-4111-8111-111111111111")
        let beaconAddress = try #require(IPAddress("10.0.0.7"))
        let mdnsAddress = try #require(IPAddress("fe80::7%lo"))
        let signed = Sighting(
            kind: .present, uuid: Self.id, name: "Ada", versionID: "2.0.0", instance: "I1",
            address: beaconAddress, port: 18_521, interval: .seconds(2),
            capabilities: ["ack", "tls"], fingerprint: String(repeating: "ab", count: 32),
            isSigned: true)
        var claim = signed
        (claim.name, claim.address, claim.fingerprint, claim.isSigned) = ("Mallory", mdnsAddress, nil, false)
        _ = table.observe(signed, at: .now)
        #expect(table.observe(claim, at: .now) == .none)
        let peer = try #require(table.peers[Self.id])
        #expect(peer.name == "Ada" && peer.isSigned && peer.addresses == [beaconAddress, mdnsAddress])
        var alone = PeerTable(ownUUID: "11111111-1111-4111-8111-111111111111")
        // Its key pinned, the claim names no other key: the handshake will prove the pinned one.
        guard case .found(let found, _) = alone.observe(claim, at: .now, pinnedKey: signed.fingerprint) else {
            Issue.record("a DNS-SD sighting of a pinned peer found nothing")
            return
        }
        #expect(found.speaksTLS && found.fingerprint == nil && !found.isSigned)
    }
}
