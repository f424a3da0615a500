import FoundationEssentials
import Glibc
import HexCarrier
import HexDNS
import HexEngine
import HexKit
import HexNet

/// hexd's own mDNS responder and DNS-SD browser (RFC 6762, 6763), beside the beacons: publishes
/// `_hexd._tcp` (probing for its instance name first, renaming on a conflict, announcing twice,
/// answering queries by multicast, by unicast when asked, and legacy unicast queries), browses
/// for the same service, and hands the peer directory a `Sighting` for each instance it learns.
/// The carriers' services are published beside it and the types they browse for asked about in
/// the same queries (`CarrierDNSSD`). Hidden, it says goodbye and stays silent; at stop it says
/// goodbye too.
///
/// Every datagram it reads is bounded (`DNSMessage.maximumBytes`), counted against a budget, and
/// read only from a source on one of this host's links.
actor DNSSDService: DaemonService, CarrierDNSSD {
    static let port: UInt16 = 5353

    private let socket: DatagramSocket
    private let socket6: DatagramSocket?
    private let group: IPv4Address
    private let group6: IPv6Address
    private var advert: DNSSDAdvert
    /// What to send when, and how to answer: probing, announcing, renaming, querying.
    private var responder: MDNSResponder
    private var browser: DNSSDBrowser
    /// The carriers' browsers, by service type, each with whom it tells (a few: one per carrier).
    private var carrierBrowsers: [DNSName: (browser: DNSSDBrowser, found: @Sendable (DNSSDFound) async -> Void)] = [:]
    private let ownUUID: String
    private let selection: NetworkInterfaces.Selection
    private let discovery: Discovery
    private let directory: PeerDirectory
    private let events: EventLog
    private let logger: Logger

    /// The last browse query sent, to know it when it comes back (multicast is looped back).
    private var lastQuery: [UInt8]?
    /// Datagrams read, all sources together: a flood costs a bounded share of a core.
    private var budget = TokenBucket(rate: 200, burst: 400)
    /// This host's IPv4 interface addresses and IPv6 prefixes, read at each round: what an
    /// on-link source is.
    private var localNetworks: [NetworkInterfaces.Address] = []
    private var localPrefixes: [NetworkInterfaces.IPv6Prefix] = []
    /// This host's addresses when last read for a conflict check (`recentAddresses`), and when.
    private var addressesRead: (at: ContinuousClock.Instant, addresses: [IPAddress])?
    private let doorbell = Doorbell()

    private(set) var datagramsRead = 0
    private(set) var datagramsDropped = 0

    /// Binds port 5353 over IPv4 (and IPv6 where the host has it), shared with any other responder.
    /// - Throws: `SocketError` or `DNSError` when it cannot.
    init(
        identity: LocalIdentity, versionID: String, start: String, fingerprint: String?, tcpPort: UInt16,
        selection: NetworkInterfaces.Selection, withIPv6: Bool, discovery: Discovery, directory: PeerDirectory,
        events: EventLog, logger: Logger
    ) throws {
        guard let group = IPv4Address("224.0.0.251"), let group6 = IPv6Address("ff02::fb") else {
            throw DNSError("the mDNS groups")
        }
        (self.group, self.group6) = (group, group6)
        socket = try DatagramSocket(address: .anyV4, port: Self.port, multicastHops: 255)
        socket6 = withIPv6 ? try? DatagramSocket(address: .anyV6, port: Self.port, multicastHops: 255) : nil
        advert = try DNSSDAdvert(
            name: identity.name, peerID: identity.uuid, versionID: versionID, start: start,
            fingerprint: fingerprint, port: tcpPort)
        responder = MDNSResponder(name: identity.name)
        browser = DNSSDBrowser(service: advert.service)
        ownUUID = identity.uuid.uppercased()
        self.selection = selection
        self.discovery = discovery
        self.directory = directory
        self.events = events
        self.logger = logger
    }

    /// What it does now, for `status`.
    var summary: String {
        let name = advert.instance.firstLabel
        let counts = "\(datagramsRead) mDNS datagrams read, \(datagramsDropped) dropped"
        if responder.isPublished { return "published as '\(name)' (_hexd._tcp), browsing; \(counts)" }
        if responder.claimsName { return "probing for '\(name)'; \(counts)" }
        if responder.renames >= MDNSResponder.maximumRenames {
            return "not published: \(MDNSResponder.maximumRenames) names taken by other responders; \(counts)"
        }
        return "silent while hidden; \(counts)"
    }

    /// Whether `--mdns auto` finds another mDNS stack here: Avahi's socket exists while it runs.
    static var otherResponderRuns: Bool { access("/run/avahi-daemon/socket", F_OK) == 0 }

    /// Serves until cancelled, following the daemon's visibility.
    func run() async {
        let changes = await events.watch(since: .max, kinds: [.visibilityChanged])
        if await discovery.isVisible { begin() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { await self.visibilityChanged() }
            }
            group.addTask { await self.serve() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Receives, and sends what is due; when the next step changes (a rename, a visibility), starts
    /// over with the new deadline.
    private func serve() async {
        while !Task.isCancelled {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.receiveLoop() }
                if let socket6 = self.socket6 { group.addTask { await self.receive(from: socket6) } }
                group.addTask { await self.doorbell.wait() }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Says goodbye (every record with TTL 0) when published.
    func sayGoodbye() {
        guard responder.hide() else { return }
        multicast { advert.announcement(addresses: $0, ttl: 0) }
    }

    /// Probing and browsing from the start, after a short random delay (RFC 6762, 8.1), so that
    /// daemons started together do not probe in step.
    private func begin() {
        let probeAfter = Duration.milliseconds(Int.random(in: 20...250))
        if responder.show(at: .now, probeAfter: probeAfter, queryAfter: .milliseconds(Int.random(in: 20...120))) {
            doorbell.ring()
        }
    }

    /// Says goodbye and goes silent when the daemon hides; probes and browses again when it shows.
    func visibilityChanged() async {
        if await discovery.isVisible {
            begin()
        } else {
            sayGoodbye()
            doorbell.ring()
        }
    }

    // MARK: Carriers

    func publish(_ persona: DNSSDPersona) {
        do {
            advert = try advert.publishing(persona)
        } catch {
            return logger.warning("cannot publish \(persona.type) by DNS-SD: \(error)")
        }
        // Announced at once when hexd's own records are; else with them, once probed.
        if responder.isPublished { multicast { advert.announcement(addresses: $0) } }
    }

    func browse(_ type: String, found: @escaping @Sendable (DNSSDFound) async -> Void) {
        guard let name = try? DNSSDPersona.name(ofType: type) else {
            return logger.warning("cannot browse for \(type) by DNS-SD: not a service type")
        }
        carrierBrowsers[name] = (DNSSDBrowser(service: name), found)
        if responder.questionAdded(at: .now) { doorbell.ring() }
    }

    // MARK: Loops

    private func receiveLoop() async {
        while !Task.isCancelled {
            for action in responder.fire(at: .now) { perform(action) }
            let due = responder.deadline
            do {
                guard let datagram = try await socket.receive(maximumLength: DNSMessage.maximumBytes, before: due)
                else { continue }
                await handle(datagram)
            } catch is CancellationError {
                return
            } catch {
                logger.limited("mdns receive", .warning, "\(error)")
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func receive(from socket6: DatagramSocket) async {
        while !Task.isCancelled {
            do {
                await handle(try await socket6.receive(maximumLength: DNSMessage.maximumBytes))
            } catch is CancellationError {
                return
            } catch {
                logger.limited("mdns receive", .warning, "\(error)")
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Sends the probe, announcement or browse query the responder says is due, or takes the
    /// name it says to.
    private func perform(_ action: MDNSResponder.Action) {
        switch action {
        case .probe(let unicastResponse):
            multicast { advert.probe(addresses: $0, unicastResponse: unicastResponse) }
        case .announce(let first):
            multicast { advert.announcement(addresses: $0) }
            if first { logger.info("published by DNS-SD as \(advert.instance)") }
        case .query:
            let message = DNSMessage(
                questions: browsedTypes.map { DNSQuestion(name: $0, type: DNSType.ptr) }, answers: knownAnswers)
            lastQuery = try? message.encoded()
            multicast { _ in message }
        case .rename(let name):
            do {
                advert = try advert.renamed(name)
                logger.warning("another responder uses this DNS-SD instance name: probing for '\(name)'")
            } catch {
                logger.warning("cannot rename the DNS-SD instance to \(name): \(error)")
            }
            doorbell.ring()
        case .giveUp:
            logger.warning(
                "DNS-SD: \(MDNSResponder.maximumRenames) instance names taken by other responders; "
                    + "not published any more (beacons still find peers)")
        }
    }

    // MARK: Receiving

    private func handle(_ datagram: DatagramSocket.Datagram) async {
        datagramsRead += 1
        guard budget.take(at: .now), !datagram.truncated,
            let (sender, byHopLimit) = onLink(
                datagram.sender, hopLimit: datagram.hopLimit, interface: datagram.interface),
            let message = try? DNSMessage.decode(datagram.bytes)
        else {
            datagramsDropped += 1
            return
        }
        if message.isResponse {
            await take(message, from: datagram.sender)
        } else if message.isStandardQuery {
            // A source of no subnet or prefix here is answered on the link it came in on alone.
            let arrivedOn = byHopLimit ? datagram.interface.flatMap(Self.interfaceName) : nil
            await answer(message, from: datagram, sender: sender, arrivedOn: arrivedOn, byHopLimit: byHopLimit)
        }
    }

    /// A response: a conflict with what this daemon publishes (then it renames and probes
    /// again), and what it says about peers.
    private func take(_ response: DNSMessage, from sender: IPAddress) async {
        // This host's addresses are read only when there is a name to defend.
        if responder.claimsName {
            // A conflict with addresses read a second ago is checked again with the addresses now: the
            // host may have gained the one its own echoed answer names.
            let conflicts = { (mine: [IPAddress]) in
                response.records.contains { self.advert.conflicts(with: $0, addresses: mine) }
            }
            if conflicts(recentAddresses()), conflicts(recentAddresses(readAgain: true)) {
                for action in responder.conflictHeard(at: .now) { perform(action) }
                return
            }
        }
        for sighting in browser.take(response, from: sender, at: .now).compactMap(\.sighting)
        where sighting.uuid != ownUUID {
            // Never waits for the store, which would hold the responder's answers and probes.
            if await !directory.offer(sighting) {
                logger.limited(
                    "dns-sd answers waiting", .warning,
                    "dropped an answer naming \(sighting.name): \(PeerDirectory.unpinnedLimit) wait for pinned keys")
            }
        }
        for type in Array(carrierBrowsers.keys) {
            guard let found = carrierBrowsers[type]?.browser.take(response, from: sender, at: .now), !found.isEmpty,
                let tell = carrierBrowsers[type]?.found
            else { continue }
            for instance in found { await tell(instance) }
        }
    }

    /// The service types browsed for: `_hexd._tcp`, then the carriers'.
    private var browsedTypes: [DNSName] { [advert.service] + carrierBrowsers.keys.sorted { "\($0)" < "\($1)" } }

    /// The instances every browser heard lately, as a query's known answers: at most
    /// `maximumKnownAnswers`, so that a query stays within a datagram (RFC 6762, 7.2 would split
    /// a longer list over several; the instances left out are answered again, which costs a few).
    private var knownAnswers: [DNSRecord] {
        let all = browser.knownAnswers(at: .now) + carrierBrowsers.values.flatMap { $0.browser.knownAnswers(at: .now) }
        return Array(all.prefix(Self.maximumKnownAnswers))
    }

    /// Known answers one query lists at most: a PTR of a long instance name is under 90 bytes.
    static let maximumKnownAnswers = 80

    /// Another browser's query for every type this one browses counts as this daemon's own, sent
    /// now, when it lists no known answer this daemon would not (RFC 6762, 7.3): a crowd of
    /// daemons then asks about once a round, not once each.
    private func suppressOwnQuery(after other: DNSMessage, bytes: [UInt8]) {
        guard bytes != lastQuery,
            browsedTypes.allSatisfy({ type in
                other.questions.contains { $0.name == type && $0.type == DNSType.ptr && !$0.unicastResponse }
            })
        else { return }
        // Up to 80 known answers a side: looked up, not compared pair by pair.
        let ours = Set(knownAnswers.map(\.identity))
        guard other.answers.allSatisfy({ ours.contains($0.identity) }) else { return }
        responder.sameQueryHeard(at: .now)
    }

    /// Whether another host's probe (its proposed records in the authority section) wins the
    /// tie-break for a name this daemon probes for (RFC 6762, 8.2): compared name by name, with
    /// the records this daemon proposes on the link the probe came from. Its own probe, heard on
    /// another of its interfaces (`all` its addresses), is no other host's.
    private func losesTieBreak(to probe: DNSMessage, onLink addresses: [IPAddress], all: [IPAddress]) -> Bool {
        guard !advert.isOwnProbe(probe, addresses: all) else { return false }
        let ours = advert.uniqueRecords(addresses: addresses)
        return [advert.instance, advert.host].contains { name in
            let theirs = probe.authorities.filter { $0.name == name }
            return !theirs.isEmpty && ProbeTieBreak(ours: ours.filter { $0.name == name }, theirs: theirs) == .theirsWin
        }
    }

    /// Answers `query`, which came in `datagram` from `sender` (its source, on the link it came
    /// in on: `onLink(_:)`). A sender taken `byHopLimit` (of no subnet or prefix here) is answered
    /// by multicast alone, on `arrivedOn`: a unicast answer to an address no route here leads to
    /// would leave by the default route, to whoever a spoofer named.
    private func answer(
        _ query: DNSMessage, from datagram: DatagramSocket.Datagram, sender: IPAddress, arrivedOn: String?,
        byHopLimit: Bool
    ) async {
        suppressOwnQuery(after: query, bytes: datagram.bytes)
        guard responder.claimsName else { return }
        // The interfaces are read once for the answer and for where it goes.
        let links = links()
        let onLink = Self.addresses(
            of: links.v4 + links.v6, onLinkOf: sender, networks: localNetworks, arrivedOn: arrivedOn)
        if responder.isProbing, !query.authorities.isEmpty {
            let theirsWin = losesTieBreak(to: query, onLink: onLink, all: (links.v4 + links.v6).map(\.address))
            if responder.simultaneousProbeHeard(theirsWin: theirsWin, at: .now) {
                logger.info(
                    "another host probes for '\(advert.instance.firstLabel)' with records that win: "
                        + "probing again in a second")
                doorbell.ring()
            }
            return
        }
        guard responder.isPublished, await discovery.isVisible else { return }
        let (answers, additionals) = advert.answers(to: query, addresses: onLink)
        guard !answers.isEmpty else { return }
        let reply = responder.reply(
            to: query.questions.map(\.name.description), unicastAsked: query.questions.allSatisfy(\.unicastResponse),
            legacy: datagram.senderPort != Self.port, at: .now)
        switch reply {
        case .none:
            return
        case .legacyUnicast where byHopLimit:
            return
        case .legacyUnicast:
            // A legacy unicast query (RFC 6762, 6.7): the id and questions echoed, short TTLs.
            let capped = (answers + additionals).map { record in
                var record = record.with(ttl: min(record.ttl, 10))
                record.cacheFlush = false
                return record
            }
            let legacyReply = DNSMessage(
                id: query.id, flags: DNSMessage.responseFlag | DNSMessage.authoritativeFlag,
                questions: query.questions, answers: capped)
            send(legacyReply, to: sender, port: datagram.senderPort)
        case .unicast, .multicast:
            let response = DNSMessage(
                flags: DNSMessage.responseFlag | DNSMessage.authoritativeFlag, answers: answers,
                additionals: additionals)
            if reply == .unicast && !byHopLimit {
                send(response, to: sender, port: Self.port)
            } else {
                multicast(toward: sender, arrivedOn: arrivedOn, over: links) { _ in response }
            }
        }
    }

    // MARK: Sending

    /// The interface addresses mDNS speaks on (IPv6 link-local ones included), each with its
    /// interface and where multicast goes for it; this host's IPv4 networks are read again too.
    private typealias Links = (v4: [NetworkInterfaces.Target], v6: [NetworkInterfaces.Target])

    private func links() -> Links {
        localNetworks = NetworkInterfaces.addresses()
        localPrefixes = socket6 == nil ? [] : NetworkInterfaces.ipv6Prefixes()
        let v4 = NetworkInterfaces.targets(of: localNetworks, selection: selection).filter { $0.broadcast != nil }
        let v6 =
            socket6 == nil
            ? []
            : NetworkInterfaces.multicastTargets(
                of: NetworkInterfaces.ipv6Links(),
                group: group6, selection: selection
            )
            .filter { $0.broadcast != nil }
        return (v4, v6)
    }

    /// This host's addresses on the interfaces mDNS speaks on.
    private func addresses() -> [IPAddress] {
        let (v4, v6) = links()
        return (v4 + v6).map(\.address)
    }

    /// This host's addresses as read at most a second ago (now when `readAgain`), for a response's
    /// conflict check: a crowd's responses come by the hundred a second, and reading the interfaces
    /// again for each (netlink, /proc) cost more than the rest of the response.
    private func recentAddresses(readAgain: Bool = false) -> [IPAddress] {
        if !readAgain, let read = addressesRead, ContinuousClock.now - read.at < .seconds(1) { return read.addresses }
        let addresses = addresses()
        addressesRead = (.now, addresses)
        return addresses
    }

    /// The addresses of `targets` on the interface `sender` is on, the one whose IPv4 subnet holds
    /// it (else `arrivedOn`, the one its datagram came in on) or the one its IPv6 zone names; all
    /// of them when no interface is found. A host on two links does not tell one link the
    /// addresses of the other, which its hosts may not reach (RFC 6762, 15).
    static func addresses(
        of targets: [NetworkInterfaces.Target], onLinkOf sender: IPAddress,
        networks: [NetworkInterfaces.Address], arrivedOn: String? = nil
    ) -> [IPAddress] {
        let interfaces: Set<String> =
            switch sender {
            case .v4(let address):
                Set(networks.filter { sameSubnet($0, address) }.map(\.interface)).union(arrivedOn.map { [$0] } ?? [])
            case .v6(let address):
                Set(
                    targets.filter {
                        if case .v6(let own) = $0.address { own.scope == address.scope } else { false }
                    }.map(\.interface))
            }
        let onLink = targets.filter { interfaces.contains($0.interface) }.map(\.address)
        return onLink.isEmpty ? targets.map(\.address) : onLink
    }

    /// Multicasts on every interface (or only the one `sender` is on: its IPv4 subnet's, else
    /// `arrivedOn`, or its IPv6 zone's) the message `make` builds from that interface's addresses,
    /// joining the group on each as it goes: a new interface is joined at the next message, and
    /// each link hears only its own addresses.
    private func multicast(
        toward sender: IPAddress? = nil, arrivedOn: String? = nil, over known: Links? = nil,
        _ make: ([IPAddress]) -> DNSMessage
    ) {
        let (v4, v6) = known ?? links()
        var built: [String: [UInt8]?] = [:]
        func bytes(for interface: String) -> [UInt8]? {
            if let made = built[interface] { return made }
            let made = try? make((v4 + v6).filter { $0.interface == interface }.map(\.address)).encoded()
            if made == nil {
                logger.limited("mdns size", .warning, "an mDNS message would be over \(DNSMessage.maximumBytes) bytes")
            }
            built[interface] = made
            return made
        }
        for target in v4 {
            let index = if_nametoindex(target.interface)
            guard index != 0 else { continue }
            if case .v4(let from)? = sender, !Self.contains(localNetworks, target.interface, from),
                target.interface != arrivedOn
            {
                continue
            }
            if case .v6? = sender { continue }
            guard let bytes = bytes(for: target.interface) else { continue }
            do {
                try socket.join(group, interface: index)
                try socket.send(bytes, to: group, port: Self.port, interface: index)
            } catch {
                logger.limited("mdns send", .warning, "\(error)")
            }
        }
        guard let socket6 else { return }
        for target in v6 {
            guard case .v6(let destination)? = target.broadcast else { continue }
            if case .v6(let from)? = sender, from.scope != destination.scope { continue }
            if case .v4? = sender { continue }
            guard let bytes = bytes(for: target.interface) else { continue }
            do {
                try socket6.join(group6, interface: destination.scope)
                try socket6.send(bytes, to: .v6(destination), port: Self.port)
            } catch {
                logger.limited("mdns send", .warning, "\(error)")
            }
        }
    }

    private func send(_ message: DNSMessage, to address: IPAddress, port: UInt16) {
        do {
            let bytes = try message.encoded()
            switch address {
            case .v4: try socket.send(bytes, to: address, port: port)
            case .v6: try socket6?.send(bytes, to: address, port: port)
            }
        } catch {
            logger.limited("mdns send", .warning, "\(error)")
        }
    }

    /// `address` when it is on one of this host's links (RFC 6762, 11), an IPv6 one with the
    /// interface it is on as its zone; nil when it is not.
    private func onLink(_ address: IPAddress, hopLimit: Int?, interface: UInt32?) -> (IPAddress, byHopLimit: Bool)? {
        if localNetworks.isEmpty && localPrefixes.isEmpty { _ = links() }
        return Self.onLink(
            address, hopLimit: hopLimit, interface: interface, networks: localNetworks, prefixes: localPrefixes)
    }

    /// The name of the interface of index `index`; nil when there is none.
    private static func interfaceName(_ index: UInt32) -> String? {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &name) != nil else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `address` when it is on one of the links `networks` and `prefixes` describe: an IPv6
    /// link-local address (its zone is its link), an IPv6 address within one of the prefixes (an
    /// on-link ULA or global address: given the zone of the prefix's interface, so that the answer
    /// goes to that link alone), or an IPv4 address within one of the subnets. Any other is on a
    /// link too when its datagram arrived with TTL or hop limit 255, which no router passes on (a
    /// host on the link with an address of no prefix here), on `interface`, the one it came in on
    /// (an IPv6 address given it as its zone): `byHopLimit` then. Nil for the rest (RFC 6762, 11:
    /// a responder answers only its links).
    static func onLink(
        _ address: IPAddress, hopLimit: Int?, interface: UInt32?, networks: [NetworkInterfaces.Address],
        prefixes: [NetworkInterfaces.IPv6Prefix]
    ) -> (IPAddress, byHopLimit: Bool)? {
        switch address {
        case .v6(let address) where address.isLinkLocal:
            return (.v6(address), false)
        case .v6(let address):
            let link = prefixes.first {
                !$0.address.isLinkLocal && $0.contains(address) && (address.scope == 0 || address.scope == $0.index)
            }
            if let link { return (.v6(address.scoped(to: link.index)), false) }
            guard hopLimit == Self.onLinkHopLimit, let interface else { return nil }
            return (.v6(address.scoped(to: interface)), true)
        case .v4(let address):
            if networks.contains(where: { sameSubnet($0, address) }) { return (.v4(address), false) }
        }
        guard hopLimit == Self.onLinkHopLimit, interface != nil else { return nil }
        return (address, true)
    }

    /// The TTL or hop limit mDNS is sent with (RFC 6762, 11), which only a sender on the link can
    /// make a datagram arrive with.
    static let onLinkHopLimit = 255

    private static func contains(
        _ networks: [NetworkInterfaces.Address], _ interface: String,
        _ address: IPv4Address
    ) -> Bool {
        networks.contains { $0.interface == interface && sameSubnet($0, address) }
    }

    private static func sameSubnet(_ network: NetworkInterfaces.Address, _ address: IPv4Address) -> Bool {
        zip(zip(network.address.bytes, network.netmask.bytes), address.bytes).allSatisfy { pair, byte in
            pair.0 & pair.1 == byte & pair.1
        }
    }
}
