import HexCarrier
import HexControl
import HexKit
import HexStore

/// Carries out control requests against the daemon's services, and reports their errors in the
/// control protocol's terms (`ControlError(reporting:)`).
struct ControlHandler: Sendable {
    let wire: WireSettings
    /// Whose hexes and alerts are taken (`status`).
    let accept: AcceptPolicy
    /// The data directory's path (`status`).
    let dataDirectory: String
    let service: HexService
    let sender: SendService
    let outbox: Outbox
    let share: ShareService
    let discovery: Discovery
    let directory: PeerDirectory
    let dnssd: DNSSDState
    /// The envelope server, for its connection counts.
    let inbound: EnvelopeServer
    /// Nil when playing a legacy peer, which has no key to pair.
    let pairing: PairingService?
    /// Fetches what peers shared; nil when playing a legacy peer, which speaks no TLS.
    let fetcher: FileFetcher?
    /// hexd as a device of other protocols (LocalSend, KDE Connect, Quick Share).
    let carriers: ForeignCarriers
    let tcpPort: UInt16
    let discoveryPort: UInt16
    let logger: Logger

    /// Writes the answer to `request` with `write`: one response; for a list one per item and a
    /// last one with `end`; for a queued send `queued`, then its outcome. A failure is answered as an
    /// error response, never thrown; only a failing `write` (the client left) ends it early.
    func handle(_ request: ControlRequest, write: (ControlResponse) async throws -> Void) async throws {
        let response: ControlResponse
        do {
            switch request {
            case .inboxList(let page): response = try await streamHexes(in: .inbox, page, write: write)
            case .hexlistList(let page): response = try await streamHexes(in: .myHexlist, page, write: write)
            case .peers(let page): response = try await streamPeers(page, write: write)
            case .outboxList(let page): response = try await streamOutbox(page, write: write)
            case .alertsList(let page): response = try await streamAlerts(page, write: write)
            case .send(let draft, let options):
                let hex = try service.ownHex(
                    description: draft.description, color: draft.color, links: Self.links(draft.links))
                response = try await send(.hex(hex), options, write: write)
            case .hexlistSend(let id, let options):
                response = try await send(.hex(try await service.hexToSend(id)), options, write: write)
            case .alert(let message, let options): response = try await send(.alert(message), options, write: write)
            case .share(let request): response = try await shareFiles(request, write: write)
            case .fetch(let request): response = try await fetchFiles(request) { try await writeItem($0, with: write) }
            case .grants: response = try await streamGrants { try await writeItem($0, with: write) }
            default: response = try await perform(request)
            }
        } catch let error as ClientGone {
            throw error
        } catch {
            let reported = ControlError(reporting: error)
            // A failed share was logged where it failed; any other failure is unexpected.
            if reported.code == .failed && !(error is ShareError) {
                logger.error("\(request.command.rawValue): \(error)")
            }
            response = ControlResponse(error: reported)
        }
        try await write(response)
    }

    /// Carries out `request`, writing each response with `write`, unless `gone` returns first
    /// (the client left): the request is then cancelled (a share stops its link commands and
    /// sends nothing, a send stops waiting).
    /// - Returns: false when the client is gone or a write failed.
    func answer(
        _ request: ControlRequest, write: @escaping @Sendable (ControlResponse) async throws -> Void,
        gone: @escaping @Sendable () async -> Void
    ) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await handle(request, write: write)) != nil }
            group.addTask {
                await gone()
                return false
            }
            let answered = await group.next() ?? false
            group.cancelAll()
            return answered
        }
    }

    /// The request a line holds, read strictly.
    /// - Throws: a `usage` error naming what is wrong.
    static func request(from line: [UInt8]) throws(ControlError) -> ControlRequest {
        do {
            return try ControlCoding.decode(ControlRequest.self, from: line)
        } catch {
            throw ControlError(.usage, "not a control request: \(describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        return switch error {
        case .keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? context.debugDescription
                : "bad \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\": \(context.debugDescription)"
        @unknown default: "\(error)"
        }
    }

    /// A list of hexes, one summary per response, read from the store a page at a time.
    private func streamHexes(in location: HexLocation, _ page: ListPage, write: (ControlResponse) async throws -> Void)
        async throws -> ControlResponse
    {
        try await streamPages(page, cursor: \.id, write: write) { cursor, limit in
            try await summaries(
                in: location, after: cursor, limit: limit, fieldCharacters: ControlLimits.listFieldCharacters + 1)
        } response: { summary in
            let (clipped, truncated) = summary.clipped(toCharacters: ControlLimits.listFieldCharacters)
            return ControlResponse(summary: clipped, truncated: truncated ? true : nil)
        }
    }

    /// The outbox, one entry per response, read from the store a page at a time.
    private func streamOutbox(_ page: ListPage, write: (ControlResponse) async throws -> Void) async throws
        -> ControlResponse
    {
        let cursor: (OutboxEntry) -> UUID? = { UUID(uuidString: $0.messageID) }
        return try await streamPages(page, cursor: cursor, write: write) { cursor, limit in
            try await outbox.entries(after: cursor?.uuidString, limit: limit)
        } response: {
            ControlResponse(outbox: OutboxItem($0))
        }
    }

    /// The kept Alerts, newest first, one per response, read from the store a page at a time.
    /// Their messages are cut to the control protocol's bounds, as a hex's text is in a list.
    private func streamAlerts(
        _ page: ListPage, write: (ControlResponse) async throws -> Void
    ) async throws -> ControlResponse {
        try await streamPages(page, cursor: \.id, write: write) { cursor, limit in
            try await service.alerts(after: cursor, limit: limit)
        } response: { alert in
            var clipped = alert
            clipped.message = String(alert.message.prefix(ControlLimits.listFieldCharacters))
            return ControlResponse(truncated: clipped.message != alert.message ? true : nil, alert: clipped)
        }
    }

    /// Writes a list read `fetch` by `fetch` (the items after a cursor, at most a count), one
    /// response per item, up to the page's limit; the last response says whether more follow.
    private func streamPages<Item>(
        _ page: ListPage, cursor: (Item) -> UUID?, write: (ControlResponse) async throws -> Void,
        fetch: (UUID?, Int) async throws -> [Item], response: (Item) -> ControlResponse
    ) async throws -> ControlResponse {
        var remaining = page.limit ?? .max
        var position = page.after
        var count = 0
        while remaining > 0 {
            let wanted = min(ControlLimits.pageSize, remaining)
            let items = try await fetch(position, wanted)
            for item in items { try await writeItem(response(item), with: write) }
            count += items.count
            remaining -= items.count
            guard items.count == wanted, let last = items.last else {
                return ControlResponse(end: ListEnd(count: count, more: false))
            }
            position = cursor(last)
        }
        // The limit was reached: say whether anything follows.
        let more = try await !fetch(position, 1).isEmpty
        return ControlResponse(end: ListEnd(count: count, more: more))
    }

    private func summaries(in location: HexLocation, after cursor: UUID?, limit: Int, fieldCharacters: Int) async throws
        -> [HexSummary]
    {
        do {
            return try await service.summaries(
                in: location, after: cursor, limit: limit, fieldCharacters: fieldCharacters)
        } catch let error as HexManagerError {
            throw ControlError(.notFound, "\(error); it may have been deleted since it was listed")
        }
    }

    /// The peers, one per response, in name order.
    private func streamPeers(_ page: ListPage, write: (ControlResponse) async throws -> Void) async throws
        -> ControlResponse
    {
        let limit = page.limit ?? .max
        var peers = try await peers()
        if let after = page.after?.uuidString {
            guard let index = peers.firstIndex(where: { $0.uuid == after }) else {
                throw ControlError(
                    .notFound, "no peer \(after) in the table; it may have been lost since it was listed")
            }
            peers.removeFirst(index + 1)
        }
        for peer in peers.prefix(limit) { try await writeItem(ControlResponse(peer: peer), with: write) }
        return ControlResponse(end: ListEnd(count: min(limit, peers.count), more: peers.count > limit))
    }

    /// Writes one item of a list; a failure means the client is gone.
    func writeItem(_ response: ControlResponse, with write: (ControlResponse) async throws -> Void) async throws {
        do {
            try await write(response)
        } catch {
            throw ClientGone()
        }
    }

    /// The client stopped reading a list.
    struct ClientGone: Error {}

    private func perform(_ request: ControlRequest) async throws -> ControlResponse {
        switch request {
        case .status: return ControlResponse(status: try await status())
        case .refreshPeers:
            await discovery.refresh()
            for carrier in carriers.up { await carrier.refresh() }
            return ControlResponse()
        case .peers, .inboxList, .hexlistList, .outboxList, .alertsList, .send, .hexlistSend, .alert, .share, .watch,
            .fetch, .grants:
            // Lists and sends may answer in several lines: `handle` writes them; `watch` is the control server's.
            throw ControlError(.usage, "\(request.command.rawValue) is answered in several lines, not at once")
        case .outboxRetry(let id, let timeout):
            let (entry, attempt) = try await outbox.retry(id, timeout: timeout ?? SendOptions.defaultTimeout)
            return try Self.response(to: attempt, of: entry.messageID)
        case .outboxCancel(let id): return ControlResponse(outbox: OutboxItem(try await outbox.cancel(id)))
        case .revoke(let id): return ControlResponse(grant: try await service.revokeGrant(matching: id, at: Date()))
        case .alertsDelete(let id): return ControlResponse(alert: try await service.deleteAlert(id))
        case .inboxShow(let id, let full):
            let hex = try await service.read(id)
            guard !full else { return ControlResponse(hex: hex) }
            let (clipped, truncated) = hex.clipped(
                fieldBytes: ControlLimits.showFieldBytes, links: ControlLimits.showLinks)
            return ControlResponse(hex: clipped, truncated: truncated ? true : nil)
        case .inboxCheck(let id): return ControlResponse(hex: try await service.check(id))
        case .inboxDelete(let id): return ControlResponse(hex: try await service.delete(id, from: .inbox))
        case .inboxSave(let id): return ControlResponse(hex: try await service.saveToMyHexlist(id))
        case .hexlistAdd(let draft):
            return ControlResponse(
                hex: try await service.createHex(
                    description: draft.description, color: draft.color, links: Self.links(draft.links)))
        case .hexlistRemove(let id): return ControlResponse(hex: try await service.delete(id, from: .myHexlist))
        case .hexlistMove(let id, let index): return ControlResponse(hex: try await service.move(id, to: index))
        case .queries: return ControlResponse(queries: await share.registry.inFlight)
        case .cancel(let text):
            let id = try await query(matching: text)
            guard await share.registry.cancel(id) else { throw LookupError.noQuery(id.uuidString) }
            return .done
        case .block(let sender):
            let id = try await peerUUID(sender)
            if let unproved = PeerIDForms.form(of: id)?.unproved {
                throw ControlError(
                    .usage,
                    "\(id.prefix(40)) \(unproved): nothing proves who sends from it, and what it sends names no "
                        + "sender, so there is no ID to block (hexd --accept known keeps strangers out)")
            }
            return ControlResponse(blocked: try await service.setBlocked(true, senderUUID: id))
        case .unblock(let sender):
            return ControlResponse(blocked: try await service.setBlocked(false, senderUUID: try await peerUUID(sender)))
        case .blocked: return ControlResponse(blocked: try await service.blockedSenders())
        case .pair(let peer, let accept, let timeout):
            let step: TrustStep = accept ? .accept : .request
            return ControlResponse(trust: try await trust(step, peer, timeout: timeout ?? SendOptions.defaultTimeout))
        case .declinePairing(let peer):
            return ControlResponse(trust: try await trust(.decline, peer, timeout: SendOptions.defaultTimeout))
        case .unpair(let peer):
            let uuid = try await peerUUID(peer, orRemembered: true)
            // A device's carrier ends its pairing on both sides; with the carrier off, or when the
            // certificate kept is all there is to it (a hexd peer's), the store's unpairing ends it here.
            let kind = sender.kind(of: uuid)
            if let flow = trustFlows(timeout: SendOptions.defaultTimeout).first(where: { type(of: $0).kind == kind }),
                let outcome = try await flow.unpair(uuid, label: peer)
            {
                return ControlResponse(trust: TrustReport(outcome))
            }
            let pin = try await service.unpair(peer: uuid, label: peer)
            return ControlResponse(
                trust: TrustReport(peerUUID: uuid, peer: await peerName(uuid), key: pin.fingerprint, trust: pin.trust))
        case .visibility(let change):
            guard let change else {
                return ControlResponse(visibility: VisibilityReport(await discovery.visibility, at: Date()))
            }
            let visibility = try await discovery.change(to: change)
            await dnssd.followVisibility()
            return ControlResponse(visibility: VisibilityReport(visibility, at: Date()))
        case .resetTrust(let peer):
            let uuid = try await peerUUID(peer, orRemembered: true)
            let forgotten = try await service.resetTrust(peer: uuid, label: peer)
            await directory.forgetImpostor(uuid)
            await pairing?.forget(peerUUID: uuid)
            logger.info("forgot the key \(forgotten.fingerprint) pinned to \(uuid): the next key it proves is pinned")
            return ControlResponse(trust: TrustReport(peerUUID: uuid, peer: await peerName(uuid), key: nil, trust: nil))
        }
    }

    /// The person's `step` about what `text` names, taken by the trust flow it belongs to.
    /// - Throws: `LookupError` when `text` names nothing `step` applies to, or is ambiguous; what
    ///   the step throws, a carrier's refusal in the person's words.
    private func trust(_ step: TrustStep, _ text: String, timeout: Duration) async throws -> TrustReport {
        guard let (flow, id) = try await trustSubject(named: text, for: step, timeout: timeout) else {
            _ = try pairingService()  // A daemon playing a legacy peer says why it pairs with none.
            throw step == .request ? LookupError.noPeer(text) : LookupError.noPairing(text)
        }
        do {
            return TrustReport(try await flow.trust(step, id))
        } catch let refusal as TrustRefusal {
            throw ControlError(.rejected, refusal.description)
        }
    }

    /// The trust flows the person drives: hexd's own pairing (none while playing a legacy peer),
    /// its steps waiting `timeout` for the peer, then the carriers' up now.
    private func trustFlows(timeout: Duration) -> [any TrustingCarrier] {
        let own = pairing.map { PairingTrust(pairing: $0, directory: directory, timeout: timeout) }
        return (own.map { [$0] } ?? []) + carriers.up
    }

    /// The trust flow, and the ID of the peer or device, that `text` names for `step` (a hexd peer,
    /// a LocalSend device's offer, a KDE Connect device linked); nil when it names none. One rule
    /// for every kind: a text that two flows claim, or that also names a peer or device another
    /// kind's carrier lists (a KDE Connect phone called Pixel beside a Quick Share offer from
    /// Pixel), names none of them; the person gives the full ID or the offer's key.
    /// - Throws: `LookupError.twoKinds` when it is ambiguous so.
    private func trustSubject(named text: String, for step: TrustStep, timeout: Duration) async throws
        -> (any TrustingCarrier, String)?
    {
        var found: [(flow: any TrustingCarrier, id: String)] = []
        for flow in trustFlows(timeout: timeout) {
            if let id = try await flow.trustSubject(named: text, for: step) { found.append((flow, id)) }
        }
        guard let first = found.first else { return nil }
        let claimer = type(of: first.flow)
        let namesake = claimer.namesake(first.id)
        if found.count > 1 {
            throw LookupError.twoKinds(text, namesake, type(of: found[1].flow).namesake(found[1].id))
        }
        if let other = try await sender.namesake(named: text, besides: claimer.kind) {
            throw LookupError.twoKinds(text, other, namesake)
        }
        return first
    }

    /// The pairing service; a legacy peer has none.
    private func pairingService() throws(ControlError) -> PairingService {
        guard let pairing else {
            throw ControlError(.usage, "this daemon plays a legacy peer (--legacy), which has no key to pair")
        }
        return pairing
    }

    /// The name a peer in the table announced; empty for a peer not in it.
    private func peerName(_ uuid: String) async -> String {
        (try? await directory.peer(matching: uuid).name) ?? ""
    }

    /// The peer ID a user means: a UUID, a LocalSend or KDE Connect device's ID, or the name or
    /// unique ID prefix of a peer in the table or of a LocalSend or KDE Connect device listed.
    /// - Parameter orRemembered: also a peer remembered from an earlier sighting, for the trust
    ///   commands: a reinstalled peer's beacons contradict its pin, so it is not in the table.
    private func peerUUID(_ text: String, orRemembered: Bool = false) async throws -> String {
        if let id = text.canonicalPeerID { return id }
        if let id = try await sender.listed(text)?.peerID { return id }
        if orRemembered, let remembered = try await service.knownPeer(matching: text) {
            // The store keeps IDs in upper case; a device of another kind has its own spelling.
            return remembered.uuid.canonicalPeerID ?? remembered.uuid
        }
        throw ControlError(
            .usage,
            "'\(text.clipped(toUTF8: 80))' is neither a peer's ID nor the name or ID prefix of a peer or a device "
                + "listed now (see hexctl peers)"
        )
    }

    /// The share query in flight whose id is `text` or starts with it (any case).
    private func query(matching text: String) async throws(LookupError) -> UUID {
        let matches = await share.registry.inFlight.map(\.id).filter { $0.uuidString.hasPrefix(text.uppercased()) }
        guard let match = matches.first else { throw .noQuery(text) }
        guard matches.count == 1 else { throw .ambiguousQuery(text, matches: matches.count) }
        return match
    }

    /// The daemon's state, one read from each service: the store, the directory, discovery and
    /// DNS-SD (the inbound server's counts are read without a hop).
    private func status() async throws -> StatusReport {
        let store = try await service.statusSnapshot()
        let census = await directory.census
        let found = await discovery.snapshot
        let identity = service.identity
        return StatusReport(
            peerUUID: identity.uuid, name: identity.name, versionID: wire.appVersion,
            legacy: wire.legacy,
            tcpPort: tcpPort, discoveryPort: discoveryPort, dataDirectory: dataDirectory,
            peers: census.count, inbox: store.counts.inbox, unchecked: store.counts.unchecked,
            hexlist: store.counts.hexlist,
            datagramsReceived: found.datagramsReceived, datagramsMalformed: found.datagramsMalformed,
            datagramsOversized: found.datagramsOversized, datagramsRateLimited: found.datagramsRateLimited,
            peersEvicted: census.evicted, fingerprint: sender.envelopes.tls?.identity.fingerprint.description,
            accept: accept.rawValue, outbox: store.outbox.entries,
            connections: ConnectionCounts(inbound.counts, gate: inbound.gateCounts),
            datagramsForged: found.datagramsForged,
            datagramsReplayed: found.datagramsReplayed, storage: StorageReport(store.storage),
            visibility: VisibilityReport(found.visibility, at: Date()),
            discoveryHint: found.discoveryHint,
            interfaces: found.interfacePlan?.map {
                InterfaceReport(
                    interface: $0.interface, address: $0.address.description,
                    broadcast: $0.broadcast?.description, skipped: $0.skipped)
            },
            announceInterval: found.interval.inSeconds,
            beaconFailures: found.beaconFailures, dnssd: await dnssd.summary,
            carriers: await carrierReports(), starting: carriers.starting)
    }

    /// What each carrier up now says of itself.
    private func carrierReports() async -> [CarrierReport] {
        var reports: [CarrierReport] = []
        for carrier in carriers.up {
            let status = await carrier.status()
            reports.append(
                CarrierReport(
                    name: type(of: carrier).name, kind: type(of: carrier).kind, port: status.port,
                    identity: status.identity, identityName: status.identityName,
                    counts: status.counts.map { CarrierCount(name: $0.name, count: $0.count, words: $0.words) },
                    notes: status.notes))
        }
        return reports
    }

    /// The peers in the table, each with how its key is trusted, a pairing under way and a key
    /// mismatch; then the UUIDs only impostors claim, each shown by its claim.
    private func peers() async throws -> [PeerInfo] {
        let now = ContinuousClock.now
        let impostors = Dictionary(
            await directory.impostors.map { ($0.uuid, $0) },
            uniquingKeysWith: { first, _ in first })
        func mismatch(_ uuid: String) -> KeyMismatch? {
            impostors[uuid].map {
                KeyMismatch(endpoint: $0.endpoint.description, fingerprint: $0.fingerprint, pinned: $0.pinned)
            }
        }
        let table = await directory.peers
        let trust = try await service.trust(of: table.map { ($0.uuid, $0.name) })
        let pairings = await pairing?.pending(for: table.map(\.uuid)) ?? [:]
        var infos: [PeerInfo] = []
        for peer in table {
            let namesakes = trust[peer.uuid]?.namesakes ?? []
            infos.append(
                PeerInfo(
                    uuid: peer.uuid, name: peer.name, versionID: peer.versionID, endpoint: peer.endpoint.description,
                    addresses: peer.addresses.map(\.description), legacy: peer.isLegacy,
                    lastSeen: (now - peer.lastSeen).inSeconds,
                    fingerprint: peer.fingerprint, trust: trust[peer.uuid]?.pin?.trust,
                    pairing: pairings[peer.uuid].map(PairingStatus.init), keyMismatch: mismatch(peer.uuid),
                    namesakes: namesakes.isEmpty ? nil : namesakes))
        }
        let listed = Set(table.map(\.uuid))
        for impostor in impostors.values.sorted(by: { $0.name.lowercased() < $1.name.lowercased() })
        where !listed.contains(impostor.uuid) {
            infos.append(
                PeerInfo(
                    uuid: impostor.uuid, name: impostor.name, versionID: impostor.versionID,
                    endpoint: impostor.endpoint.description,
                    addresses: [], legacy: HexdVersion.isLegacy(impostor.versionID),
                    lastSeen: (now - impostor.lastSeen).inSeconds,
                    fingerprint: nil, trust: try await service.pin(forPeer: impostor.uuid)?.trust,
                    keyMismatch: mismatch(impostor.uuid)))
        }
        for carrier in carriers.up {
            for device in await carrier.listed(at: now) {
                infos.append(try await info(device, of: type(of: carrier)))
            }
        }
        return infos
    }

    /// A carrier's device as `hexctl peers` lists it: paired as the carrier says, else as the
    /// store's pin says.
    private func info(_ device: ListedDevice, of carrier: any Carrier.Type) async throws -> PeerInfo {
        let trust: SenderTrust? =
            if let paired = device.paired { paired ? .paired : nil } else {
                try await service.pin(forPeer: device.id)?.trust
            }
        return PeerInfo(
            uuid: device.id, name: device.name, versionID: device.versionID, endpoint: device.endpoint,
            addresses: device.addresses, legacy: false, lastSeen: device.lastHeard.inSeconds,
            fingerprint: device.fingerprint, trust: trust,
            pairing: device.pairing.map {
                PairingStatus(
                    code: $0.code, awaitingUs: $0.awaitingUs, offer: device.offer?.what, offerBy: device.offer?.via,
                    offerCheck: device.offer?.check, offerPairs: device.offer?.acceptingPairs == true ? true : nil)
            },
            kind: carrier.kind, protocolName: carrier.name, keyless: device.keyless ? true : nil,
            pairable: device.pairable ? true : nil, deviceType: device.deviceType, deviceModel: device.deviceModel)
    }

    /// Sends `payload` as `options` say. Through the outbox (the default): commits it, answers
    /// `queued`, then (unless `wait` is false) attempts it and answers how that went; a failure
    /// worth retrying is the error `queued`. Without the outbox: one attempt, its outcome.
    private func send(_ payload: Outbox.Payload, _ options: SendOptions, write: (ControlResponse) async throws -> Void)
        async throws -> ControlResponse
    {
        let messageID = options.messageID ?? UUID()
        let timeout = options.timeout ?? SendOptions.defaultTimeout
        guard options.queue else {
            let receipt = try await outbox.sendOnce(
                payload, to: options.to, messageID: messageID, forceLegacy: options.legacy,
                wait: options.wait, timeout: timeout)
            return ControlResponse(send: SendReport(receipt))
        }
        func queued(_ entry: OutboxEntry) -> ControlResponse {
            ControlResponse(
                queued: QueuedReport(
                    messageID: entry.messageID, peer: entry.label, peerUUID: entry.peerUUID, expires: entry.expiresAt))
        }
        guard options.wait else {
            let entry = try await outbox.enqueue(
                payload, to: options.to, messageID: messageID, forceLegacy: options.legacy)
            return queued(entry)
        }
        let held = try await outbox.hold(payload, to: options.to, messageID: messageID, forceLegacy: options.legacy)
        do {
            try await write(queued(held.entry))
        } catch {
            await outbox.release(held)
            throw ClientGone()
        }
        let attempt = await outbox.attempt(held, timeout: timeout)
        return try Self.response(to: attempt, of: messageID.uuidString)
    }

    /// The answer to an attempt at a queued send: the report of a delivery, or the error saying
    /// it is still queued, or why it failed.
    private static func response(to attempt: Outbox.Attempt, of messageID: String) throws -> ControlResponse {
        switch attempt {
        case .delivered(let receipt):
            return ControlResponse(send: SendReport(receipt))
        case .retrying(let reason, let next):
            throw ControlError(
                .queued,
                "not delivered yet (\(reason)); queued as \(messageID): "
                    + "hexd tries again at \(next.formatted(.iso8601)), "
                    + "or as soon as the peer is heard from (see hexctl outbox)")
        case .failed(let reason):
            throw ControlError(.rejected, reason)
        case .gone:
            throw ControlError(.notFound, "\(messageID) left the outbox before it was attempted (cancelled?)")
        case .underWay(let reason):
            throw ControlError(
                .queued,
                "not delivered yet: \(reason); queued as \(messageID): hexd waits for the answer, "
                    + "and tries again should none come (see hexctl outbox)")
        }
    }

    /// Gathers one link per file, then saves the hex or sends it: nothing is saved or sent
    /// unless every file got its link.
    private func shareFiles(_ request: ShareRequest, write: (ControlResponse) async throws -> Void) async throws
        -> ControlResponse
    {
        let query = request.query ?? UUID()
        let audience: ShareAudience
        switch request.destination {
        case .myHexlist:
            audience = .myHexlist
        case .peer(let options):
            // The peer is looked up once: a device of another protocol gets the files themselves.
            let target = try await sender.target(options.to)
            // A carrier not up refuses it, or has it tried again, as it would a hex.
            if let id = target.peerID, let entry = sender.entry(for: target),
                let carrier = try entry.up() as? any DeviceCarrier
            {
                return try await sendFiles(request.files, query: query) { paths, progress in
                    try await carrier.sendFiles(paths, to: id, progress: progress)
                }
            }
            audience = await shareAudience(of: target, options)
        }
        let gathered: [LinkJM]
        do {
            gathered = try await share.links(
                for: request.files, query: query, provider: request.provider,
                audience: audience,
                timeout: request.gatherTimeout ?? ShareRequest.defaultGatherTimeout)
        } catch {
            logger.warning(
                "share \(query.uuidString) gathered no links: \(error)",
                [("query", query.uuidString), ("files", String(request.files.count))])
            throw error
        }
        let links = Self.links(gathered)
        switch request.destination {
        case .myHexlist:
            return ControlResponse(
                hex: try await service.createHex(description: request.description, color: request.color, links: links))
        case .peer(let options):
            let hex = try service.ownHex(description: request.description, color: request.color, links: links)
            return try await send(.hex(hex), options, write: write)
        }
    }

    /// Sends the files themselves to a device of another kind through `send`, at once: not
    /// through the outbox, whose sends are hexes. Progress goes out as `filesSending` events under
    /// the share's query id.
    private func sendFiles(
        _ files: [String], query: UUID,
        through send: ([String], @escaping @Sendable (String, Int64, Int64) async -> Void) async throws -> FilesDelivery
    ) async throws -> ControlResponse {
        let paths = try files.map { try FileLinkProvider.absolutePath($0) }
        let start = ContinuousClock.now
        let sent = try await send(paths) { [events = share.events] name, sent, total in
            await events.publish(.filesSending, id: query.uuidString, message: "\(name): \(sent)/\(total)")
        }
        let elapsed = ContinuousClock.now - start
        let size = ByteCount.text(Int(clamping: sent.bytes))
        logger.info("\(sent.files) file(s), \(size), to \(sent.label)")
        return ControlResponse(
            send: SendReport(
                peer: sent.label, messageID: nil, status: .received, message: sent.report(size),
                milliseconds: elapsed.inSeconds * 1_000, peerKey: sent.certificate?.description))
    }

    /// Who a share sent to `target` with `options` is for: a peer known by the ID its key derives (in the
    /// table, seen before, or at the address given), to whom `peer` links can be granted; or a
    /// legacy peer or an unknown address, which cannot fetch from this daemon.
    private func shareAudience(of target: CarrierTarget, _ options: SendOptions) async -> ShareAudience {
        var uuid = target.peerID
        if let address = target.address, let peer = await directory.peer(at: address), peer.isSigned {
            uuid = peer.uuid
        }
        guard !options.legacy, !wire.legacy, let uuid, uuid.isKeyDerivedID else {
            return .unkeyedPeer(target.label)
        }
        return .keyedPeer(FileGrants.Recipient(deviceID: uuid, name: target.label))
    }

    /// The links of a user's hex as they are stored and sent.
    private static func links(_ links: [LinkJM]) -> [Link] {
        links.map {
            Link(url: $0.url ?? "", linkDescription: $0.linkDescription ?? "", service: $0.service ?? .unknown)
        }
    }
}

extension TrustReport {
    init(_ outcome: TrustOutcome) {
        self.init(
            peerUUID: outcome.peerID, peer: outcome.name, key: outcome.key, trust: outcome.trust,
            code: outcome.code, awaitingPeer: outcome.awaitingDevice ? true : nil, offer: outcome.offer,
            accepted: outcome.accepted)
    }
}

extension SendReport {
    init(_ receipt: CarrierReceipt) {
        let delivery = receipt.delivery
        self.init(
            peer: receipt.peer, messageID: receipt.messageID, status: delivery.status, message: delivery.message,
            milliseconds: delivery.elapsed.inSeconds * 1_000, hexID: delivery.hexID,
            peerKey: delivery.peerKey?.description)
    }
}

extension OutboxItem {
    init(_ entry: OutboxEntry) {
        self.init(
            messageID: entry.messageID, kind: entry.kind.rawValue, peer: entry.label, peerUUID: entry.peerUUID,
            address: entry.address,
            attempts: entry.attempts, nextAttempt: entry.nextAttemptAt, lastError: entry.lastError,
            created: entry.createdAt,
            expires: entry.expiresAt)
    }
}
