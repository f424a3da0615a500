import FoundationEssentials
import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexTLS

/// Finds peers by beacons (IPv4 broadcast, IPv6 multicast, unicast to each `--peer`): announces
/// this daemon in a burst at start and then every interval, checks every beacon heard (budgets,
/// signature, freshness) and hands the peer directory a `Sighting` for each one that passes,
/// answers new and restarted peers at once (rate-limited), and says `bye` when asked to stop.
/// Hidden (`Visibility`), it only listens.
actor Discovery: DaemonService {
    private let socket: DatagramSocket
    /// The IPv6 socket beside it, on the same port; nil where the host has no IPv6.
    private let socket6: DatagramSocket?
    /// hexd's link-local multicast group (Protocol.md, section 9): IPv6 beacons go to it on each
    /// interface, and every daemon joins it on each.
    static let group = IPv6Address("ff02::4865:7864")
    private let settings: DiscoverySettings
    /// The version announced in beacons.
    private let versionID: String
    private let identity: LocalIdentity
    /// This device's key, which signs every beacon; nil exactly when playing a legacy peer,
    /// which speaks no TLS and signs nothing.
    private let signer: TLSIdentity?
    /// This start's number, and the number of the last beacon signed in it.
    private let boot: UInt64
    private var sequence: UInt64 = 0
    /// This start's instance, as beacons (and DNS-SD's TXT record) carry it.
    let instance = UUID().uppercaseText
    private let tcpPort: UInt16
    private let events: EventLog
    private let service: HexService
    private let directory: PeerDirectory
    private let logger: Logger

    private var freshness = BeaconFreshness()
    private var verifiedKeys = VerifiedKeys()
    /// Signature checks of beacons claiming peers not in the table: a flood of invented signed
    /// beacons costs at most these, whatever its number of sources.
    private var strangerChecks = TokenBucket(
        rate: Discovery.strangerChecksPerSecond,
        burst: Discovery.strangerChecksPerSecond)
    static let strangerChecksPerSecond = 1_000.0
    private var rateLimiter: BeaconRateLimiter<IPAddress>
    private(set) var datagramsReceived = 0
    private(set) var datagramsMalformed = 0
    private(set) var datagramsOversized = 0
    private(set) var datagramsRateLimited = 0
    private(set) var datagramsForged = 0
    private(set) var datagramsReplayed = 0
    /// Whether this daemon announces itself, kept across restarts.
    private(set) var visibility: Visibility
    /// Visibility changes begun so far, and the last one kept in the store and not acted on yet:
    /// only the latest change to end acts, on what was kept last, so that what is announced is
    /// what a restart reads, however changes overlap (the store keeps them in order).
    private var visibilityChanges: UInt64 = 0
    private var keptVisibility: (change: UInt64, visibility: Visibility)?
    /// The person's changes whose keeping is under way: the end of a visibility for a while waits
    /// for none of them, and is overtaken by each.
    private var visibilityChangesUnderWay = 0

    /// Whether it announces itself now.
    var isVisible: Bool { visibility.isVisible(at: Date()) }
    /// When each beacon is due and what it is, the answers to new peers, and the end of a
    /// visibility for a while. The receive loop acts on it: waiting for a datagram and for the
    /// next deadline is one wait, on the reactor's thread, so that an idle daemon wakes once per
    /// beacon (not also a timer thread, to wake another).
    private var schedule: AnnounceSchedule
    /// Rung when the schedule's deadline comes sooner, which the receive loop may be waiting for
    /// the old one (or none) of.
    private let doorbell = Doorbell()
    /// The interval announced now (`AnnounceInterval`): the configured one, longer on a crowded
    /// segment.
    var interval: Duration { schedule.interval }

    /// What a firewall must let through, once `AnnounceSchedule.quietBeacons` steady beacons went
    /// out with no peer heard; nil again once one is.
    private(set) var discoveryHint: String?

    init(
        socket: DatagramSocket, socket6: DatagramSocket?, settings: DiscoverySettings, versionID: String,
        identity: LocalIdentity, signer: TLSIdentity?, boot: UInt64, tcpPort: UInt16,
        directory: PeerDirectory, events: EventLog, service: HexService, logger: Logger, visibility: Visibility
    ) {
        self.visibility = visibility
        schedule = AnnounceSchedule(interval: settings.announceInterval)
        self.socket = socket
        self.socket6 = socket6
        self.settings = settings
        self.versionID = versionID
        self.identity = identity
        self.signer = signer
        self.boot = boot
        self.tcpPort = tcpPort
        self.events = events
        self.service = service
        self.directory = directory
        self.logger = logger
        rateLimiter = BeaconRateLimiter(rate: settings.beaconRate)
    }

    /// Runs until cancelled: receiving, and announcing while visible.
    func run() async {
        apply(visibility)
        do {
            interfaceChanges = try InterfaceChanges()
        } catch {
            logger.info("\(error): new interfaces are found at the next beacon only")
        }
        while !Task.isCancelled {
            // When beacons start again while the loop waits without a deadline, or an interface
            // changed, it starts over with the new deadline.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.receiveLoop() }
                if let socket6 = self.socket6 { group.addTask { await self.receive(from: socket6) } }
                group.addTask { await self.doorbell.wait() }
                if let changes = self.interfaceChanges { group.addTask { await self.follow(changes) } }
                await group.next()
                group.cancelAll()
            }
        }
        schedule.hide()
    }

    /// Watches this host's links and addresses; nil where netlink is not available.
    private var interfaceChanges: InterfaceChanges?

    /// Waits for the next change of this host's links or addresses, then starts over with a query
    /// (as at start) on every interface (`AnnounceSchedule.queryAgain`): a link that just
    /// came up is announced on at once, not an interval later. Returning, it makes the receive
    /// loop start over with the new deadline.
    private func follow(_ changes: InterfaceChanges) async {
        do {
            try await changes.next()
        } catch is CancellationError {
            return
        } catch {
            logger.warning("\(error): new interfaces are found at the next beacon only")
            interfaceChanges = nil
            return
        }
        schedule.queryAgain(at: .now)
    }

    /// Asks who is there now (`hexctl peers --refresh`): a query goes out within 100 ms, as when
    /// an interface comes up; the peers that hear it answer at once.
    func refresh() {
        schedule.queryAgain(at: .now)
        doorbell.ring()
    }

    /// Tells every peer this daemon is leaving (a hidden one said it when it hid).
    func sayGoodbye() async {
        if visibility.isVisible(at: Date()) { await broadcast(.bye) }
    }

    /// Changes the visibility, keeps it for the next start and acts on it: hiding says `bye` (so
    /// that peers drop this daemon at once) and stops beacons; showing announces at once.
    /// - Throws: what the store throws when it cannot keep it (then nothing changed).
    func change(to change: VisibilityChange) async throws -> Visibility {
        let new: Visibility =
            switch change {
            case .visible: .visible
            case .hidden: .hidden
            case .visibleFor(let duration): .visibleUntil(Date().addingTimeInterval(duration.inSeconds))
            }
        visibilityChanges += 1
        let change = visibilityChanges
        visibilityChangesUnderWay += 1
        defer { visibilityChangesUnderWay -= 1 }
        do {
            try await service.keepVisibility(new)
            kept(new, by: change)
        } catch {
            await settleKept(ifLatest: change)
            throw error
        }
        await settleKept(ifLatest: change)
        return new
    }

    /// Notes that `change` kept `visibility`, unless a later change's was noted already.
    private func kept(_ visibility: Visibility, by change: UInt64) {
        if keptVisibility.map({ $0.change < change }) ?? true { keptVisibility = (change, visibility) }
    }

    /// Acts on the visibility kept last, when `change` is the latest change begun.
    private func settleKept(ifLatest change: UInt64, wasAnnouncing: Bool? = nil) async {
        guard change == visibilityChanges, let kept = keptVisibility else { return }
        keptVisibility = nil
        await settle(to: kept.visibility, wasAnnouncing: wasAnnouncing ?? schedule.isAnnouncing)
    }

    /// Takes `new` as the visibility and says so: a `bye` when beacons stop, an event either way.
    /// The visibility and the schedule change together, before the `bye` (whose `--peer` names
    /// may take a while to resolve): a change that comes meanwhile finds them agreeing.
    /// - Parameter wasAnnouncing: whether beacons went out until now.
    private func settle(to new: Visibility, wasAnnouncing: Bool) async {
        visibility = new
        apply(new)
        if wasAnnouncing && !new.isVisible(at: Date()) { await broadcast(.bye, hiding: true) }
        // Changed again while the bye went out: that change says what it is.
        guard visibility == new else { return }
        let text = new.text(at: Date())
        logger.info("visibility: \(text)")
        await events.publish(.visibilityChanged, message: text)
    }

    /// Starts (from a `query`, as at start) or stops the beacons, with the end of a visibility for
    /// a while as the schedule's deadline.
    private func apply(_ new: Visibility) {
        let now = Date()
        guard new.isVisible(at: now) else {
            schedule.hide()
            (discoveryHint, interfacePlan) = (nil, nil)
            return
        }
        var end: ContinuousClock.Instant?
        if case .visibleUntil(let date) = new { end = .now + .seconds(date.timeIntervalSince(now)) }
        if schedule.show(at: .now, until: end) { doorbell.ring() }
    }

    /// A visibility for a while is over: hidden again (peers are told), and kept so.
    private func visibilityEnded() async {
        // A change the person asked for is being kept: it decides, and the schedule follows it.
        guard visibilityChangesUnderWay == 0, case .visibleUntil = visibility else { return }
        visibilityChanges += 1
        let change = visibilityChanges
        do {
            try await service.keepVisibility(.hidden)
        } catch {
            // Hidden all the same: a restart reads the old end, which is over, as hidden too.
            logger.warning("cannot keep the visibility (hidden): \(error)")
        }
        kept(.hidden, by: change)
        await settleKept(ifLatest: change, wasAnnouncing: true)
    }

    // MARK: Loops

    /// Reads datagrams and acts on the schedule when it is due, until cancelled.
    private func receiveLoop() async {
        while !Task.isCancelled {
            if schedule.isDue(at: .now) { await actOnSchedule() }
            do {
                guard
                    let datagram = try await socket.receive(
                        maximumLength: Beacon.maximumSize,
                        before: schedule.deadline)
                else { continue }
                await handle(datagram)
            } catch is CancellationError {
                return
            } catch {
                logger.warning("\(error)")
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Reads the datagrams of the IPv6 socket until cancelled (the IPv4 loop sends the beacons).
    private func receive(from socket6: DatagramSocket) async {
        while !Task.isCancelled {
            do {
                await handle(try await socket6.receive(maximumLength: Beacon.maximumSize))
            } catch is CancellationError {
                return
            } catch {
                logger.warning("\(error)")
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Does what the schedule says is due: a beacon, the quiet hint, or the end of a visibility.
    private func actOnSchedule() async {
        let peers = await directory.count
        // Read again after the await: hidden meanwhile, nothing is due.
        for action in schedule.fire(at: .now, peers: peers) {
            switch action {
            case .broadcast(let kind): await broadcast(kind)
            case .quietHint: giveQuietHint()
            case .visibilityEnded: await visibilityEnded()
            }
        }
    }

    /// Says once which ports a firewall must let through: no peer was heard for a while.
    private func giveQuietHint() {
        let hint =
            "no peer heard in \(AnnounceSchedule.quietBeacons) beacon intervals: if other hexd run on this "
            + "network, a firewall may drop what they send; let in UDP \(socket.port) (discovery), TCP \(tcpPort) "
            + "(envelopes) and UDP 5353 (DNS-SD), for example with 'firewall-cmd --add-service=hexd' or "
            + "'ufw allow hexd' (Examples/firewalld, Examples/ufw)"
        discoveryHint = hint
        logger.info(hint)
    }

    // MARK: Receiving

    private func handle(_ datagram: DatagramSocket.Datagram) async {
        datagramsReceived += 1
        guard rateLimiter.admit(datagram.sender, at: .now) else {
            datagramsRateLimited += 1
            logger.limited(
                "datagram flood", .warning,
                "dropping datagrams from \(datagram.sender) (or everywhere): more than "
                    + "\(Int(rateLimiter.rate * BeaconRateLimiter<IPAddress>.addressFactor)) a second from one "
                    + "address, or \(Int(rateLimiter.rate * BeaconRateLimiter<IPAddress>.totalFactor)) from all")
            return
        }
        guard !datagram.truncated else {
            datagramsOversized += 1
            logger.limited(
                "oversized datagram", .info,
                "dropped an oversized datagram from \(datagram.sender):\(datagram.senderPort)")
            return
        }
        guard let beacon = Beacon.decode(datagram.bytes) else {
            datagramsMalformed += 1
            logger.limited(
                "malformed datagram", .info,
                "dropped a datagram that is not a beacon from \(datagram.sender):\(datagram.senderPort)")
            return
        }
        // Our own beacons, heard back, cost no signature check.
        guard beacon.peer != identity.uuid else { return }
        guard rateLimiter.admit(peer: beacon.peer.uppercased(), from: datagram.sender, at: .now) else {
            datagramsRateLimited += 1
            logger.limited(
                "beacon flood", .warning,
                "dropping beacons claiming \(beacon.peer) from \(datagram.sender): "
                    + "more than \(settings.beaconRate) a second")
            return
        }
        guard let signed = await admit(beacon, from: datagram) else { return }
        if schedule.peerHeard() { logger.info("a peer was heard: beacons get through") }
        discoveryHint = nil
        let sighting = Sighting(beacon, from: datagram.sender, signed: signed)
        let (sender, port, isQuery) = (datagram.sender, datagram.senderPort, beacon.kind == .query)
        // Never waits for the store: that would hold the beacons heard meanwhile, and this daemon's own.
        let offered = await directory.offer(sighting) { change in
            await self.respond(to: change, from: sender, port: port, isQuery: isQuery)
        }
        if !offered {
            datagramsRateLimited += 1
            logger.limited(
                "beacons waiting", .warning,
                "dropped a beacon of \(beacon.peer): \(PeerDirectory.unpinnedLimit) wait for their peers' pinned keys")
        }
    }

    /// Answers a peer as what its sighting changed asks: a new or restarted peer at once, and
    /// one that asks who is there.
    private func respond(to change: PeerTable.Change, from sender: IPAddress, port: UInt16, isQuery: Bool) async {
        switch change {
        case .found, .restarted:
            await answer(sender, port: port)
        case .updated(let peer):
            // A peer hexes were exchanged with is not counted in the budget of all sources.
            if peer.hasExchanged { rateLimiter.markKnown(sender, at: .now) }
            if isQuery { await answer(sender, port: port) }
        case .none, .left, .keyMismatch:
            if isQuery { await answer(sender, port: port) }
        }
    }

    /// Whether a beacon proves itself (Protocol.md, section 9): true for a signed one newer than
    /// any accepted from its key, false for a legacy peer's unsigned claim, nil (dropped and
    /// counted) for one past the signature budget, forged, replayed, or heard again (which may only
    /// add the address it came from as a candidate).
    private func admit(_ beacon: Beacon, from datagram: DatagramSocket.Datagram) async -> Bool? {
        // On a dual-stack link every beacon comes twice (broadcast and multicast): the second
        // costs no signature check.
        if freshness.isHeardAgain(beacon) {
            await directory.heardAgain(beacon.peer, from: datagram.sender)
            return nil
        }
        if beacon.signature != nil || beacon.peer.isKeyDerivedID {
            let admitted = await directory.admitCheck(of: beacon.peer)
            guard admitted ?? strangerChecks.take(at: .now) else {
                datagramsRateLimited += 1
                logger.limited(
                    "signature checks", .warning,
                    "dropped a signed beacon claiming \(beacon.peer) unchecked: "
                        + "more signatures to check than the budget allows")
                return nil
            }
        }
        let (key, isKept) = verifiedKeys.key(beacon.key)
        let check = BeaconCheck(beacon, key: key)
        switch check {
        case .forged(let reason):
            datagramsForged += 1
            logger.limited(
                "forged beacon", .warning,
                "dropped a beacon from \(datagram.sender):\(datagram.senderPort) "
                    + "claiming \(beacon.peer): \(reason)")
            return nil
        case .unsigned:
            return false
        case .signed(let boot, let sequence):
            if !isKept, let key, let hex = beacon.key { verifiedKeys.keep(key, as: hex) }
            switch freshness.judge(peer: beacon.peer, boot: boot, sequence: sequence, signature: beacon.signature) {
            case .fresh:
                return true
            case .repeated:
                await directory.heardAgain(beacon.peer, from: datagram.sender)
                return nil
            case .stale:
                datagramsReplayed += 1
                logger.limited(
                    "replayed beacon", .info,
                    "dropped a replayed beacon of \(beacon.peer) from \(datagram.sender)")
                return nil
            }
        }
    }

    /// Announces at once to a new, restarted or querying peer, as the schedule allows: by unicast
    /// to where it spoke from (another subnet) and by broadcast (a unicast to a shared port
    /// reaches only one of the daemons on that host).
    private func answer(_ sender: IPAddress, port: UInt16) async {
        switch schedule.answerWanted(at: .now) {
        case .now:
            send(beacon(.announce).encoded(), to: sender, port: port)
            await broadcast(.announce)
        case .broughtForward:
            doorbell.ring()
        case .none:
            break
        }
    }

    // MARK: Sending

    /// A beacon of this daemon, signed unless it plays a legacy peer: each one numbered after the
    /// last, so that no receiver takes a replay of an earlier one.
    private func beacon(_ kind: Beacon.Kind) -> Beacon {
        let beacon = Beacon(
            kind: kind, peer: identity.uuid, instance: instance, name: identity.name,
            versionID: versionID, port: tcpPort,
            interval: schedule.interval.inSeconds,
            capabilities: signer == nil ? [] : ["ack", "tls"],
            fingerprint: signer?.fingerprint.description)
        guard let signer else { return beacon }
        sequence += 1
        guard let signed = beacon.signed(by: signer, boot: boot, sequence: sequence) else {
            logger.limited("beacon signature", .error, "cannot sign a beacon: receivers will drop it")
            return beacon
        }
        return signed
    }

    /// Where the last beacons went, interface by interface, and which were skipped and why; nil
    /// when `--broadcast` names the destinations, and while hidden.
    private(set) var interfacePlan: [NetworkInterfaces.Target]?

    /// Sends a beacon to every broadcast target and, over IPv6, to hexd's group on every link
    /// (interfaces read afresh, the group joined on each new one), and to every static peer.
    /// - Parameter hiding: the bye of a daemon that hides (not one that stops): not sent to a
    ///   `--peer` once it is shown again meanwhile.
    private func broadcast(_ kind: Beacon.Kind, hiding: Bool = false) async {
        let bytes = beacon(kind).encoded()
        var targets = settings.broadcastAddresses.map(IPAddress.v4)
        if targets.isEmpty {
            let selection = settings.interfaces
            var plan = NetworkInterfaces.targets(of: NetworkInterfaces.addresses(), selection: selection)
            if let socket6, let group = Self.group {
                let links = NetworkInterfaces.multicastTargets(
                    of: NetworkInterfaces.ipv6Links(), group: group,
                    selection: selection)
                for case .v6(let destination)? in links.map(\.broadcast) {
                    do {
                        try socket6.join(group, interface: destination.scope)
                    } catch {
                        sayOnce("\(error)")
                    }
                }
                plan += links
            }
            // A bye is sent as beacons stop: no plan is shown for them any more.
            if kind != .bye { interfacePlan = plan }
            // 255.255.255.255 leaves by whatever interface the routing table says: not when
            // interfaces are chosen.
            let chosen = !selection.including.isEmpty || !selection.excluding.isEmpty
            targets = (chosen ? [] : [.v4(.limitedBroadcast)]) + plan.compactMap(\.broadcast)
        }
        for address in targets { send(bytes, to: address, port: settings.port) }
        for peer in settings.staticPeerEndpoints {
            do {
                let address = try await StreamConnector.resolve(peer.host)
                // Shown again while the name was looked up: this bye is stale.
                guard !hiding || !isVisible else { return }
                send(bytes, to: address, port: peer.port)
            } catch {
                sayOnce("cannot send beacons to the peer \(peer) (--peer): \(error)")
            }
        }
    }

    /// Sends a datagram through the socket of `address`'s family.
    private func send(_ bytes: [UInt8], to address: IPAddress, port: UInt16) {
        let through: DatagramSocket
        switch address {
        case .v4:
            through = socket
        case .v6:
            guard let socket6 else { return sayOnce("cannot send to \(address): this host has no IPv6") }
            through = socket6
        }
        do {
            try through.send(bytes, to: address, port: port)
        } catch {
            sayOnce("\(error)")
        }
    }

    /// Says why beacons could not go somewhere once at warning level (a network without a route
    /// for 255.255.255.255 fails every round), then at debug level; the reasons remembered are
    /// bounded.
    private func sayOnce(_ reason: String) {
        if failedSends.count < Self.failuresRemembered, failedSends.insert(reason).inserted {
            logger.warning("\(reason); beacons still go to every other destination (said once)")
        } else {
            logger.debug(reason)
        }
    }

    /// Why beacons could not be sent, each said once.
    private var failedSends: Set<String> = []

    /// Where beacons could not be sent since the start, and why; nil when nothing failed.
    var beaconFailures: [String]? { failedSends.isEmpty ? nil : failedSends.sorted() }

    /// What discovery did and does, read in one call (for `status`).
    struct Snapshot: Sendable {
        var datagramsReceived: Int
        var datagramsMalformed: Int
        var datagramsOversized: Int
        var datagramsRateLimited: Int
        var datagramsForged: Int
        var datagramsReplayed: Int
        var visibility: Visibility
        var discoveryHint: String?
        var interfacePlan: [NetworkInterfaces.Target]?
        var interval: Duration
        var beaconFailures: [String]?
    }

    var snapshot: Snapshot {
        Snapshot(
            datagramsReceived: datagramsReceived, datagramsMalformed: datagramsMalformed,
            datagramsOversized: datagramsOversized, datagramsRateLimited: datagramsRateLimited,
            datagramsForged: datagramsForged, datagramsReplayed: datagramsReplayed, visibility: visibility,
            discoveryHint: discoveryHint, interfacePlan: interfacePlan, interval: interval,
            beaconFailures: beaconFailures)
    }
    static let failuresRemembered = 64
}
