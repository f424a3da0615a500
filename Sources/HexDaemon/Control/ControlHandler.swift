import HexControl
import HexKit
import HexNet

/// Carries out control requests against the daemon's services.
struct ControlHandler: Sendable {
    let configuration: DaemonConfiguration
    let service: HexService
    let share: ShareService
    let discovery: Discovery
    let events: EventLog
    let tcpPort: UInt16
    let discoveryPort: UInt16
    let logger: Logger

    /// Writes the answer to `request` with `write`: one response, or for a list one per item and
    /// a last one with `end`. A failure is answered as an error response, never thrown; only a
    /// failing `write` (the client left) ends it early.
    func handle(_ request: ControlRequest, write: (ControlResponse) async throws -> Void) async throws {
        let response: ControlResponse
        do {
            switch request.command {
            case .inboxList: response = try await streamHexes(in: .inbox, request, write: write)
            case .hexlistList: response = try await streamHexes(in: .myHexlist, request, write: write)
            case .peers: response = try await streamPeers(request, write: write)
            default: response = try await perform(request)
            }
        } catch let error as ControlError {
            response = ControlResponse(error: error)
        } catch let error as ClientGone {
            throw error
        } catch {
            logger.error("\(request.command.rawValue): \(error)")
            response = ControlResponse(error: ControlError(.failed, "\(error)"))
        }
        try await write(response)
    }

    /// A list of hexes, one summary per response, read from the store a page at a time.
    private func streamHexes(in location: HexLocation, _ request: ControlRequest, write: (ControlResponse) async throws -> Void) async throws -> ControlResponse {
        var remaining = try Self.limit(request.limit)
        var cursor = request.after
        var count = 0
        while remaining > 0 {
            let wanted = min(ControlLimits.pageSize, remaining)
            let page = try await service.summaries(in: location, after: cursor, limit: wanted, fieldCharacters: ControlLimits.listFieldCharacters + 1)
            for summary in page {
                let (clipped, truncated) = summary.clipped(toCharacters: ControlLimits.listFieldCharacters)
                try await send(ControlResponse(summary: clipped, truncated: truncated ? true : nil), with: write)
            }
            count += page.count
            remaining -= page.count
            guard page.count == wanted, let last = page.last else { return ControlResponse(end: ListEnd(count: count, more: false)) }
            cursor = last.id.uuidString
        }
        // The limit was reached: say whether anything follows.
        let more = try await !service.summaries(in: location, after: cursor, limit: 1, fieldCharacters: 1).isEmpty
        return ControlResponse(end: ListEnd(count: count, more: more))
    }

    /// The peers, one per response, in name order.
    private func streamPeers(_ request: ControlRequest, write: (ControlResponse) async throws -> Void) async throws -> ControlResponse {
        let limit = try Self.limit(request.limit)
        var peers = await peers()
        if let after = request.after?.uppercased() {
            guard let index = peers.firstIndex(where: { $0.uuid == after }) else {
                throw ControlError(.notFound, "no peer \(after.clipped(toUTF8: 40)) in the table; it may have been lost since it was listed")
            }
            peers.removeFirst(index + 1)
        }
        for peer in peers.prefix(limit) { try await send(ControlResponse(peer: peer), with: write) }
        return ControlResponse(end: ListEnd(count: min(limit, peers.count), more: peers.count > limit))
    }

    /// Writes one item of a list; a failure means the client is gone.
    private func send(_ response: ControlResponse, with write: (ControlResponse) async throws -> Void) async throws {
        do {
            try await write(response)
        } catch {
            throw ClientGone()
        }
    }

    /// The client stopped reading a list.
    struct ClientGone: Error {}

    /// A list's `limit`: at least 1; none means all.
    private static func limit(_ limit: Int?) throws -> Int {
        guard let limit else { return .max }
        guard limit > 0 else { throw ControlError(.usage, "\"limit\" must be 1 or more") }
        return limit
    }

    private func perform(_ request: ControlRequest) async throws -> ControlResponse {
        switch request.command {
        case .status: return ControlResponse(status: try await status())
        case .peers, .inboxList, .hexlistList:
            throw ControlError(.usage, "\(request.command.rawValue) is a list, answered item by item")
        case .send:
            let links = try Self.links(request.links)
            let destination = try await destination(request.to, forceLegacy: request.legacy ?? false)
            let envelope = try await service.storeEnvelope(description: request.description ?? "", color: request.color ?? HexColor.fallback,
                                                           links: links, legacy: destination.legacy)
            return ControlResponse(send: try await deliver(envelope, to: destination, request: request))
        case .hexlistSend:
            let destination = try await destination(request.to, forceLegacy: request.legacy ?? false)
            let envelope = try await service.storeEnvelope(forHex: try Self.required(request.id, "id"), legacy: destination.legacy)
            return ControlResponse(send: try await deliver(envelope, to: destination, request: request))
        case .alert:
            let message = try Self.required(request.message, "message")
            let destination = try await destination(request.to, forceLegacy: request.legacy ?? false)
            var envelope = await service.alertEnvelope(message)
            if destination.legacy { envelope.messageID = nil }
            return ControlResponse(send: try await deliver(envelope, to: destination, request: request))
        case .watch:
            throw ControlError(.usage, "watch is answered by the control server")
        case .inboxShow:
            let hex = try await service.show(try Self.required(request.id, "id"))
            guard request.full != true else { return ControlResponse(hex: hex) }
            let (clipped, truncated) = hex.clipped(fieldBytes: ControlLimits.showFieldBytes, links: ControlLimits.showLinks)
            return ControlResponse(hex: clipped, truncated: truncated ? true : nil)
        case .inboxCheck: return ControlResponse(hex: try await service.check(try Self.required(request.id, "id")))
        case .inboxDelete: return ControlResponse(hex: try await service.delete(try Self.required(request.id, "id"), from: .inbox))
        case .inboxSave: return ControlResponse(hex: try await service.saveToMyHexlist(try Self.required(request.id, "id")))
        case .hexlistAdd:
            return ControlResponse(hex: try await service.createHex(
                description: request.description ?? "", color: request.color ?? HexColor.fallback, links: try Self.links(request.links)))
        case .hexlistRemove: return ControlResponse(hex: try await service.delete(try Self.required(request.id, "id"), from: .myHexlist))
        case .hexlistMove:
            return ControlResponse(hex: try await service.move(try Self.required(request.id, "id"), to: try Self.required(request.index, "index")))
        case .share: return try await shareFiles(request)
        case .queries: return ControlResponse(queries: await share.registry.inFlight)
        case .cancel:
            let id = try await query(matching: try Self.required(request.query, "query"))
            guard await share.registry.cancel(id) else { throw ControlError(.notFound, "no share query \(id.uuidString) in flight") }
            return .done
        case .block: return ControlResponse(blocked: try await service.setBlocked(true, senderUUID: try await sender(try Self.required(request.uuid, "uuid"))))
        case .unblock: return ControlResponse(blocked: try await service.setBlocked(false, senderUUID: try await sender(try Self.required(request.uuid, "uuid"))))
        case .blocked: return ControlResponse(blocked: try await service.blockedSenders())
        }
    }

    /// The sender UUID a user means: a UUID, or a known peer's name or unique UUID prefix.
    private func sender(_ text: String) async throws -> String {
        if let uuid = UUID(uuidString: text) { return uuid.uuidString }
        do {
            return try await discovery.peer(matching: text).uuid
        } catch {
            throw ControlError(.usage, "'\(text.clipped(toUTF8: 80))' is neither a sender UUID nor a peer in the table (\(error))")
        }
    }

    /// The share query in flight whose id is `text` or starts with it (any case).
    private func query(matching text: String) async throws -> UUID {
        let matches = await share.registry.inFlight.map(\.id).filter { $0.uuidString.hasPrefix(text.uppercased()) }
        guard let match = matches.first, !text.isEmpty else { throw ControlError(.notFound, "no share query \(text.clipped(toUTF8: 40)) in flight") }
        guard matches.count == 1 else { throw ControlError(.notFound, "\(text) matches \(matches.count) share queries; give more of the id") }
        return match
    }

    private func status() async throws -> StatusReport {
        let counts = try await service.counts()
        let identity = service.identity
        return StatusReport(
            peerUUID: identity.uuid, name: identity.name, versionID: configuration.appVersion, legacy: configuration.legacy,
            tcpPort: tcpPort, discoveryPort: discoveryPort, dataDirectory: configuration.dataDirectory.path,
            peers: await discovery.peers.count, inbox: counts.inbox, unchecked: counts.unchecked, hexlist: counts.hexlist,
            datagramsReceived: await discovery.datagramsReceived, datagramsMalformed: await discovery.datagramsMalformed,
            datagramsOversized: await discovery.datagramsOversized, datagramsRateLimited: await discovery.datagramsRateLimited,
            peersEvicted: await discovery.peersEvicted)
    }

    private func peers() async -> [PeerInfo] {
        let now = ContinuousClock.now
        return await discovery.peers.map { peer in
            PeerInfo(uuid: peer.uuid, name: peer.name, versionID: peer.versionID, endpoint: peer.endpoint.description,
                            addresses: peer.addresses.map(\.description), legacy: peer.isLegacy,
                            lastSeen: (now - peer.lastSeen).inSeconds)
        }
    }

    /// Where a send goes and how: a known peer, or any `HOST:PORT`.
    private struct Destination {
        var endpoint: Endpoint
        var label: String
        var peerUUID: String?
        /// Send only what the original app understood.
        var legacy: Bool
    }

    private func destination(_ text: String?, forceLegacy: Bool) async throws -> Destination {
        let text = try Self.required(text, "to")
        // Playing a legacy peer means sending like one, whoever the receiver is.
        let legacyMode = forceLegacy || configuration.legacy
        if let endpoint = Endpoint(parsing: text) {
            let known = await discovery.peer(at: endpoint)
            return Destination(endpoint: endpoint, label: known.map { "\($0.name) (\(endpoint))" } ?? endpoint.description,
                               peerUUID: known?.uuid, legacy: legacyMode || known?.isLegacy == true)
        }
        do {
            let peer = try await discovery.peer(matching: text)
            return Destination(endpoint: peer.endpoint, label: "\(peer.name) (\(peer.endpoint))", peerUUID: peer.uuid, legacy: legacyMode || peer.isLegacy)
        } catch {
            throw ControlError(.notFound, error.description)
        }
    }

    private func deliver(_ envelope: Envelope, to destination: Destination, request: ControlRequest, timeout seconds: Double? = nil) async throws -> SendReport {
        var envelope = envelope
        if request.wait == false { envelope.messageID = nil }
        let timeout = try seconds.map { Duration.seconds($0) } ?? Self.timeout(request.timeout, default: 5)
        do {
            let delivery = try await EnvelopeSender.send(envelope, to: destination.endpoint, timeout: timeout, maximumLineLength: configuration.maximumLineLength,
                                                         awaitReply: request.wait != false)
            if let peerUUID = destination.peerUUID { await discovery.markExchanged(peerUUID) }
            let outcome = delivery.status?.rawValue ?? "sent"
            logger.info("\(envelope.operationType) to \(destination.label): \(outcome) in \(Int(clamping: delivery.elapsed.inSeconds * 1_000)) ms",
                        [("peer", destination.label), ("messageID", envelope.messageID ?? ""), ("status", outcome)])
            await events.publish(.sendAcked, peerUUID: destination.peerUUID, peer: destination.label, id: envelope.messageID, message: outcome)
            return SendReport(peer: destination.label, messageID: envelope.messageID, status: delivery.status, message: delivery.message,
                              milliseconds: delivery.elapsed.inSeconds * 1_000, hexID: delivery.hexID)
        } catch {
            logger.warning("\(envelope.operationType) to \(destination.label) failed: \(error.message)",
                           [("peer", destination.label), ("messageID", envelope.messageID ?? ""), ("status", error.code.rawValue)])
            await events.publish(.sendFailed, peerUUID: destination.peerUUID, peer: destination.label, id: envelope.messageID, message: error.message)
            throw error
        }
    }

    /// Gathers one link per file, then saves the hex or sends it: nothing is saved or sent
    /// unless every file got its link.
    private func shareFiles(_ request: ControlRequest) async throws -> ControlResponse {
        let save = request.save ?? false
        guard save != (request.to != nil) else { throw ControlError(.usage, "a share needs either \"to\" (a peer) or \"save\"") }
        let destination = save ? nil : try await destination(request.to, forceLegacy: request.legacy ?? false)
        let query = try request.query.map { text throws -> UUID in
            guard let id = UUID(uuidString: text) else { throw ControlError(.usage, "\"query\" must be a UUID") }
            return id
        } ?? UUID()
        let gathered: [LinkJM]
        do {
            gathered = try await share.links(
                for: request.files ?? [], query: query, provider: request.provider, timeout: try Self.timeout(request.timeout, default: 120))
        } catch {
            logger.warning("share \(query.uuidString) gathered no links: \(error)", [("query", query.uuidString), ("files", String(request.files?.count ?? 0))])
            throw error
        }
        let links = try Self.links(gathered)
        let description = request.description ?? ""
        let color = request.color ?? HexColor.fallback
        guard let destination else {
            return ControlResponse(hex: try await service.createHex(description: description, color: color, links: links))
        }
        let envelope = try await service.storeEnvelope(description: description, color: color, links: links, legacy: destination.legacy)
        return ControlResponse(send: try await deliver(envelope, to: destination, request: request, timeout: 5))
    }

    private static func links(_ links: [LinkJM]?) throws -> [Link] {
        guard let links, !links.isEmpty else { throw ControlError(.usage, "a hex needs at least one link") }
        return links.map { Link(url: $0.url ?? "", linkDescription: $0.linkDescription ?? "", service: $0.service ?? .unknown) }
    }

    /// A request's `timeout` in seconds: more than 0 and at most a day.
    private static func timeout(_ seconds: Double?, default defaultSeconds: Double) throws -> Duration {
        guard let seconds else { return .seconds(defaultSeconds) }
        guard seconds > 0, let duration = Duration.seconds(validating: seconds, in: 0...86_400) else {
            throw ControlError(.usage, "\"timeout\" must be seconds, more than 0 and at most 86400")
        }
        return duration
    }

    private static func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw ControlError(.usage, "the request needs \"\(name)\"") }
        return value
    }
}
