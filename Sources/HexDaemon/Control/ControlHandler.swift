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

    /// The answer to `request`; failures are answered as errors, never thrown.
    func handle(_ request: ControlRequest) async -> ControlResponse {
        do {
            return try await perform(request)
        } catch let error as ControlError {
            return ControlResponse(error: error)
        } catch {
            logger.error("\(request.command.rawValue): \(error)")
            return ControlResponse(error: ControlError(.failed, "\(error)"))
        }
    }

    private func perform(_ request: ControlRequest) async throws -> ControlResponse {
        switch request.command {
        case .status: return ControlResponse(status: try await status())
        case .peers: return ControlResponse(peers: await peers())
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
        case .inboxList: return ControlResponse(hexes: try await service.inbox())
        case .inboxShow: return ControlResponse(hex: try await service.show(try Self.required(request.id, "id")))
        case .inboxCheck: return ControlResponse(hex: try await service.check(try Self.required(request.id, "id")))
        case .inboxDelete: return ControlResponse(hex: try await service.delete(try Self.required(request.id, "id"), from: .inbox))
        case .inboxSave: return ControlResponse(hex: try await service.saveToMyHexlist(try Self.required(request.id, "id")))
        case .hexlistList: return ControlResponse(hexes: try await service.myHexlist())
        case .hexlistAdd:
            return ControlResponse(hex: try await service.createHex(
                description: request.description ?? "", color: request.color ?? HexColor.fallback, links: try Self.links(request.links)))
        case .hexlistRemove: return ControlResponse(hex: try await service.delete(try Self.required(request.id, "id"), from: .myHexlist))
        case .hexlistMove:
            return ControlResponse(hex: try await service.move(try Self.required(request.id, "id"), to: try Self.required(request.index, "index")))
        case .share: return try await shareFiles(request)
        case .queries: return ControlResponse(queries: await share.registry.inFlight)
        case .cancel:
            let id = try Self.required(request.query.flatMap(UUID.init(uuidString:)), "query")
            guard await share.registry.cancel(id) else { throw ControlError(.notFound, "no share query \(id.uuidString) in flight") }
            return .done
        case .block: return ControlResponse(blocked: try await service.setBlocked(true, senderUUID: try Self.required(request.uuid, "uuid")))
        case .unblock: return ControlResponse(blocked: try await service.setBlocked(false, senderUUID: try Self.required(request.uuid, "uuid")))
        case .blocked: return ControlResponse(blocked: try await service.blockedSenders())
        }
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

    private func deliver(_ envelope: DataSendWrapper, to destination: Destination, request: ControlRequest, timeout seconds: Double? = nil) async throws -> SendReport {
        var envelope = envelope
        if request.wait == false { envelope.messageID = nil }
        let timeout = try seconds.map { Duration.seconds($0) } ?? Self.timeout(request.timeout, default: 5)
        do {
            let delivery = try await EnvelopeSender.send(envelope, to: destination.endpoint, timeout: timeout, maximumLineLength: configuration.maximumLineLength)
            if let peerUUID = destination.peerUUID { await discovery.markExchanged(peerUUID) }
            await events.publish(.sendAcked, peerUUID: destination.peerUUID, peer: destination.label, id: envelope.messageID,
                                 message: delivery.status?.rawValue ?? "sent")
            return SendReport(peer: destination.label, messageID: envelope.messageID, status: delivery.status, message: delivery.message,
                              milliseconds: delivery.elapsed.inSeconds * 1_000)
        } catch {
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
        let gathered = try await share.links(
            for: request.files ?? [], query: query, provider: request.provider, timeout: try Self.timeout(request.timeout, default: 120))
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
