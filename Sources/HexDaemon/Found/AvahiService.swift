import HexCarrier
import HexDBus
import HexDNS
import HexEngine
import HexKit
import HexNet

/// Publishes and browses `_hexd._tcp` through Avahi, over the system bus, where Avahi runs: the
/// host keeps one mDNS stack, and hexd never binds port 5353 beside it (a second responder makes
/// mDNS unreliable for every program: KDE bug 487719).
///
/// It follows Avahi rather than owning anything: an entry group with the one service while hexd is
/// visible (withdrawn while hidden, freed at stop, so that Avahi says goodbye), a service browser
/// whose instances are resolved to sightings for the peer directory, and both made again when
/// Avahi restarts or renames its host. A name another publisher holds is replaced by the one
/// Avahi proposes. The carriers' services go in the same group, and the types they browse for get
/// browsers of their own (`CarrierDNSSD`). What comes from the bus is bounded: at most `capacity`
/// instances, the signals `DBusConnection` buffers, one resolve at a time.
actor AvahiService: DaemonService, CarrierDNSSD {
    static let capacity = 256
    /// How often the instances browsed are resolved again: the directory expires a peer three of
    /// these after it was last resolved, when Avahi no longer lists it.
    static let refreshInterval: Duration = .seconds(40)

    private let bus: DBusAddress
    private var advert: DNSSDAdvert
    private var renames = 0
    private let ownUUID: String
    private let discovery: Discovery
    private let directory: PeerDirectory
    private let events: EventLog
    private let logger: Logger

    private var connection: DBusConnection?
    /// Avahi's unique name on the bus while it runs there: the only sender whose signals count.
    private var avahi: String?
    private var version = ""
    private var group: String?
    private var groupState = AvahiAPI.GroupState.uncommitted
    private var browser: String?
    /// The carriers' browsers, by service type: the browser's path while it runs, and whom it tells.
    private var carrierBrowsers: [String: (path: String?, found: @Sendable (DNSSDFound) async -> Void)] = [:]
    /// The instances the browsers list, each of `_hexd._tcp` with its sighting once resolved.
    private var found: [AvahiAPI.Item.Key: Sighting] = [:]
    private var listed: Set<AvahiAPI.Item.Key> = []
    private var toResolve: [AvahiAPI.Item.Key] = []
    private let resolveBell = Doorbell()
    private let refreshBell = Doorbell()
    /// The group's services changed (a carrier's came) since it was filled: the next reconcile
    /// empties and fills it again, whatever state Avahi last said it was in.
    private var groupNeedsRefill = false
    private var reconciling = false
    private var reconcileAgain = false
    private var reconciled: [CheckedContinuation<Void, Never>] = []

    /// - Throws: `DNSError` when the name or ID cannot make a DNS-SD instance.
    init(
        bus: DBusAddress, identity: LocalIdentity, versionID: String, start: String, fingerprint: String?,
        tcpPort: UInt16, discovery: Discovery, directory: PeerDirectory, events: EventLog,
        logger: Logger
    ) throws(DNSError) {
        self.bus = bus
        advert = try DNSSDAdvert(
            name: identity.name, peerID: identity.uuid, versionID: versionID, start: start,
            fingerprint: fingerprint, port: tcpPort)
        ownUUID = identity.uuid.uppercased()
        self.discovery = discovery
        self.directory = directory
        self.events = events
        self.logger = logger
    }

    /// Whether Avahi has its name on the bus at `bus` now (false when the bus cannot be reached).
    static func runs(on bus: DBusAddress) async -> Bool {
        guard let connection = try? await DBusConnection.connect(to: bus, timeout: .seconds(1)) else { return false }
        defer { connection.close() }
        let reply = try? await connection.call(
            .call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "NameHasOwner", [.string(AvahiAPI.name)]),
            timeout: .seconds(1))
        return reply?.body.first?.booleanValue == true
    }

    /// What it does now, for `status`.
    var summary: String {
        guard connection != nil else { return "through Avahi: cannot reach the system bus (\(bus)); trying again" }
        guard avahi != nil else { return "through Avahi: waiting for Avahi to come back on the system bus" }
        let avahi = version.isEmpty ? "Avahi" : version
        let peers = Set(found.values.map(\.uuid)).count
        let instances = "\(peers) peer\(peers == 1 ? "" : "s") found"
        switch (group, groupState) {
        case (nil, _): return "through \(avahi): withdrawn while hidden"
        case (_, .established):
            return "published through \(avahi) as '\(advert.instance.firstLabel)' (_hexd._tcp), browsing; \(instances)"
        case (_, .failure): return "through \(avahi): Avahi could not publish; browsing; \(instances)"
        default: return "registering '\(advert.instance.firstLabel)' with \(avahi); browsing; \(instances)"
        }
    }

    /// Serves until cancelled, following the daemon's visibility and Avahi's comings and goings.
    func run() async {
        let changes = await events.watch(since: .max, kinds: [.visibilityChanged])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { await self.reconcile() }
            }
            group.addTask { await self.resolveLoop() }
            group.addTask { await self.refreshLoop() }
            group.addTask { await self.connectionLoop() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Frees the entry group (Avahi then says goodbye for hexd) and leaves the bus.
    func sayGoodbye() async {
        if let connection, let group {
            _ = try? await connection.call(AvahiAPI.groupCall(group, "Free"), timeout: .seconds(1))
        }
        connection?.close()
    }

    // MARK: The connection

    /// Connects, follows Avahi's signals while the bus lasts, and connects again after a pause that
    /// doubles (up to five minutes) while the bus cannot be reached.
    private func connectionLoop() async {
        var pause = Duration.seconds(1)
        while !Task.isCancelled {
            let began = ContinuousClock.now
            do {
                let made = try await connect()
                for await signal in made.signals { await handle(signal) }
                if Task.isCancelled { return }
                logger.info("the system bus closed the connection: DNS-SD through Avahi stops until it is back")
            } catch {
                logger.limited("avahi bus", .warning, "cannot follow Avahi on the system bus (\(bus)): \(error)")
            }
            connection?.close()
            connection = nil
            forget()
            if ContinuousClock.now - began > .seconds(60) { pause = .seconds(1) }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(300))
        }
    }

    private func connect() async throws -> DBusConnection {
        let made = try await DBusConnection.connect(to: bus, timeout: .seconds(2))
        do {
            try await made.addMatch(
                "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                    + "arg0='\(AvahiAPI.name)'")
            try await made.addMatch("type='signal',sender='\(AvahiAPI.name)'")
            connection = made
            let owner = try? await made.call(
                .call(
                    "org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus", "GetNameOwner", [.string(AvahiAPI.name)]))
            if let name = owner?.body.first?.stringValue {
                await avahiAppeared(name)
            } else {
                logger.info("Avahi is not on the system bus: DNS-SD waits for it (beacons still find peers)")
            }
            return made
        } catch {
            made.close()
            throw error
        }
    }

    private func avahiAppeared(_ name: String) async {
        // A new owner holds nothing the old one did.
        if avahi != nil && avahi != name { forget() }
        avahi = name
        let reply = try? await connection?.call(AvahiAPI.serverCall("GetVersionString"))
        version = (reply?.body.first?.stringValue ?? "").clipped(toUTF8: 40)
        logger.info("DNS-SD through \(version.isEmpty ? "Avahi" : version) on the system bus")
        await reconcile()
    }

    /// What Avahi held for this daemon is gone with it (or with the bus).
    private func forget() {
        (avahi, group, groupState, browser) = (nil, nil, .uncommitted, nil)
        forgetCarrierBrowsers()
        (found, listed, toResolve) = ([:], [], [])
    }

    /// The carriers' browsers are gone (freed, or with Avahi): made again by the next reconcile.
    private func forgetCarrierBrowsers() {
        for type in carrierBrowsers.keys { carrierBrowsers[type]?.path = nil }
    }

    // MARK: Signals

    private func handle(_ signal: DBusMessage) async {
        guard signal.kind == .signal else { return }
        if signal.interface == "org.freedesktop.DBus", signal.sender == "org.freedesktop.DBus",
            signal.member == "NameOwnerChanged", signal.body.count == 3,
            signal.body[0].stringValue == AvahiAPI.name, let owner = signal.body[2].stringValue
        {
            if owner.isEmpty {
                logger.info("Avahi left the system bus: DNS-SD waits for it to come back (beacons still find peers)")
                forget()
            } else {
                await avahiAppeared(owner)
            }
            return
        }
        guard let avahi, signal.sender == avahi else { return }
        switch (signal.interface, signal.member) {
        case (AvahiAPI.serverInterface, "StateChanged"):
            await serverStateChanged(signal.body.first?.int32Value.flatMap(AvahiAPI.ServerState.init))
        case (AvahiAPI.groupInterface, "StateChanged") where signal.path == group:
            await groupStateChanged(
                signal.body.first?.int32Value.flatMap(AvahiAPI.GroupState.init),
                error: signal.body.dropFirst().first?.stringValue ?? "")
        case (AvahiAPI.browserInterface, "ItemNew"):
            guard let item = AvahiAPI.Item(signal: signal.body), item.flags & AvahiAPI.ourOwn == 0,
                isBrowsed(item.key.type, by: signal.path)
            else { return }
            guard listed.contains(item.key) || listed.count < Self.capacity else {
                logger.limited(
                    "avahi items", .warning,
                    "Avahi lists over \(Self.capacity) instances: the others are left out")
                return
            }
            listed.insert(item.key)
            refreshBell.ring()
            queueResolve(item.key)
        case (AvahiAPI.browserInterface, "ItemRemove"):
            guard let item = AvahiAPI.Item(signal: signal.body), isBrowsed(item.key.type, by: signal.path) else {
                return
            }
            listed.remove(item.key)
            if var gone = found.removeValue(forKey: item.key) {
                gone.kind = .leaving
                // Taken after the sightings of that peer still waiting for the store, not before.
                if await !directory.offer(gone) { dropped(gone) }
            }
        case (AvahiAPI.browserInterface, "Failure")
        where signal.path == browser || carrierBrowsers.values.contains { $0.path == signal.path }:
            logger.warning("Avahi's browser failed: \(signal.body.first?.stringValue ?? "")")
        default:
            return
        }
    }

    /// Whether items of `type` are browsed for, reported by the browser at `path` (a signal that
    /// comes before the browser's path is known counts: Avahi may report items before its reply).
    private func isBrowsed(_ type: String, by path: String?) -> Bool {
        if type == AvahiAPI.serviceType { return browser == nil || path == browser }
        guard let carrier = carrierBrowsers[type] else { return false }
        return carrier.path == nil || path == carrier.path
    }

    /// A host name Avahi is (re)registering: its services go with it, and are added again once it
    /// runs (Avahi's client API asks for exactly this).
    private func serverStateChanged(_ state: AvahiAPI.ServerState?) async {
        switch state {
        case .registering?, .collision?:
            groupState = .uncommitted
            if let group { _ = try? await connection?.call(AvahiAPI.groupCall(group, "Reset")) }
        case .running?:
            await reconcile()
        default:
            return
        }
    }

    private func groupStateChanged(_ state: AvahiAPI.GroupState?, error: String) async {
        guard let state else { return }
        let previous = groupState
        groupState = state
        switch state {
        case .established where previous != .established:
            logger.info("published by DNS-SD through Avahi as '\(advert.instance.firstLabel)' (_hexd._tcp)")
        case .collision:
            if await rename() { await reconcile() }
        case .failure:
            logger.warning("Avahi could not publish '\(advert.instance.firstLabel)': \(error.clipped(toUTF8: 200))")
        default:
            return
        }
    }

    /// Takes the name Avahi proposes ("Ada #2") after a conflict and empties the group for it;
    /// false when it could not, or past `MDNSResponder.maximumRenames` (a responder claiming every
    /// name), where it stops publishing and says so.
    private func rename() async -> Bool {
        guard let connection, renames < MDNSResponder.maximumRenames else {
            logger.warning(
                "DNS-SD: \(MDNSResponder.maximumRenames) instance names taken by other responders; "
                    + "not published any more (beacons still find peers)")
            return false
        }
        renames += 1
        do {
            let reply = try await connection.call(
                AvahiAPI.serverCall(
                    "GetAlternativeServiceName",
                    [.string(advert.instance.firstLabel)]))
            guard let name = reply.body.first?.stringValue else { return false }
            advert = try advert.renamed(name)
            logger.warning("another publisher uses this DNS-SD instance name: publishing as '\(name.prefix(63))'")
            if let group { try await connection.call(AvahiAPI.groupCall(group, "Reset")) }
            groupState = .uncommitted
            return true
        } catch {
            logger.warning("cannot rename the DNS-SD instance: \(error)")
            return false
        }
    }

    // MARK: Publishing and browsing

    func publish(_ persona: DNSSDPersona) async {
        do {
            advert = try advert.publishing(persona)
        } catch {
            return logger.warning("cannot publish \(persona.type) through Avahi: \(error)")
        }
        // Avahi takes a group's services only while it is empty: the next reconcile empties and
        // fills it again (one under way runs once more).
        groupNeedsRefill = true
        await reconcile()
    }

    func browse(_ type: String, found: @escaping @Sendable (DNSSDFound) async -> Void) async {
        carrierBrowsers[type] = (nil, found)
        await reconcile()
    }

    /// Brings what Avahi holds in line with the daemon's visibility: the group and the browser
    /// while visible, neither while hidden; returns once they are. One runs at a time: a call
    /// while one runs makes it run once more, and returns when that is done.
    func reconcile() async {
        guard !reconciling else {
            reconcileAgain = true
            await withCheckedContinuation { reconciled.append($0) }
            return
        }
        reconciling = true
        repeat {
            reconcileAgain = false
            do {
                try await reconcileOnce()
            } catch {
                logger.limited("avahi publish", .warning, "Avahi refused: \(error)")
            }
        } while reconcileAgain
        reconciling = false
        reconciled.forEach { $0.resume() }
        reconciled = []
    }

    private func reconcileOnce() async throws {
        guard let connection, avahi != nil else { return }
        guard await discovery.isVisible else {
            if let group { try await connection.call(AvahiAPI.groupCall(group, "Free")) }
            for path in [browser] + carrierBrowsers.values.map(\.path) {
                guard let path else { continue }
                try await connection.call(.call(AvahiAPI.name, path, AvahiAPI.browserInterface, "Free"))
            }
            (group, groupState, browser) = (nil, .uncommitted, nil)
            forgetCarrierBrowsers()
            (found, listed, toResolve) = ([:], [], [])
            return
        }
        if browser == nil {
            browser = try await connection.call(AvahiAPI.newBrowser).body.first?.objectPathValue
        }
        // Over the types, not the dictionary: it may change while the call is under way (a carrier
        // browses, Avahi goes away), and an iterator kept across that wait crashed (a double release
        // seen in a core dump of hexd, CI's avahi.sh).
        for type in carrierBrowsers.keys.sorted() where carrierBrowsers[type]?.path == nil {
            let path = try await connection.call(AvahiAPI.newBrowser(type)).body.first?.objectPathValue
            carrierBrowsers[type]?.path = path
        }
        if group == nil {
            group = try await connection.call(AvahiAPI.serverCall("EntryGroupNew")).body.first?.objectPathValue
            groupState = .uncommitted
        }
        if let group, groupNeedsRefill {
            groupNeedsRefill = false
            try await connection.call(AvahiAPI.groupCall(group, "Reset"))
            groupState = .uncommitted
        }
        guard let group, groupState == .uncommitted, renames < MDNSResponder.maximumRenames else { return }
        do {
            try await connection.call(AvahiAPI.addService(to: group, advert))
            for persona in advert.personas.map(\.persona) {
                try await connection.call(AvahiAPI.addService(to: group, persona))
            }
        } catch let DBusError.remote(name, _) where name == "org.freedesktop.Avahi.CollisionError" {
            // Another service on this host has the name: publish under the next one.
            if await rename() { reconcileAgain = true }
            return
        }
        try await connection.call(AvahiAPI.groupCall(group, "Commit"))
        groupState = .registering
    }

    // MARK: Resolving

    /// Says that the directory, behind with the store, dropped a sighting this browser made.
    private func dropped(_ sighting: Sighting) {
        logger.limited(
            "avahi sightings waiting", .warning,
            "dropped what Avahi says of \(sighting.name): \(PeerDirectory.unpinnedLimit) wait for pinned keys")
    }

    private func queueResolve(_ key: AvahiAPI.Item.Key) {
        guard !toResolve.contains(key) else { return }
        toResolve.append(key)
        resolveBell.ring()
    }

    private func nextToResolve() -> AvahiAPI.Item.Key? {
        toResolve.isEmpty ? nil : toResolve.removeFirst()
    }

    /// Resolves the instances listed, one at a time, and hands each sighting to the directory.
    private func resolveLoop() async {
        while !Task.isCancelled {
            guard let key = nextToResolve() else {
                await resolveBell.wait()
                continue
            }
            guard let connection, listed.contains(key) else { continue }
            let reply: DBusMessage
            do {
                reply = try await connection.call(AvahiAPI.resolve(key), timeout: .seconds(10))
            } catch {
                logger.limited("avahi resolve", .info, "Avahi cannot resolve '\(key.name.prefix(63))': \(error)")
                continue
            }
            guard listed.contains(key),
                let instance = AvahiAPI.found(resolved: reply.body, interval: Self.refreshInterval)
            else { continue }
            if key.type != AvahiAPI.serviceType {
                await carrierBrowsers[key.type]?.found(instance)
                continue
            }
            guard let sighting = instance.sighting, sighting.uuid != ownUUID else { continue }
            found[key] = sighting
            if await !directory.offer(sighting) { dropped(sighting) }
        }
    }

    /// While instances are listed, resolves them all again every `refreshInterval`: a peer stays
    /// in the directory while Avahi lists it, and a new address is noticed.
    private func refreshLoop() async {
        while !Task.isCancelled {
            guard !listed.isEmpty else {
                await refreshBell.wait()
                continue
            }
            try? await Task.sleep(for: Self.refreshInterval)
            for key in listed { queueResolve(key) }
        }
    }
}
