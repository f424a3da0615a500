import HexCarrier
import HexKit

/// Who a share's links are for, which decides the provider when the request names none.
enum ShareAudience: Sendable, Equatable {
    /// The user's own My Hexlist.
    case myHexlist
    /// A peer known by its key: `peer` links can be made for it.
    case keyedPeer(FileGrants.Recipient)
    /// A legacy peer, or an address no key is known for, as the user reads it.
    case unkeyedPeer(String)

    var recipient: FileGrants.Recipient? {
        if case .keyedPeer(let recipient) = self { return recipient }
        return nil
    }
}

/// Turns a selection of files into links through a provider, one query wrapper per request.
struct ShareService: Sendable {
    let registry = QueryRegistry()
    let providers: [String: any LinkProvider]
    let events: EventLog

    /// - Parameters:
    ///   - links: the `command` provider's settings.
    ///   - grants: where `peer` links are granted; nil when playing a legacy peer (no `peer` provider).
    ///   - ownerID: this device's ID, named by `peer` links.
    init(links: LinkSettings, grants: FileGrants?, ownerID: String, events: EventLog) {
        var providers: [String: any LinkProvider] = ["url": URLLinkProvider(), "file": FileLinkProvider()]
        if let template = links.command {
            providers["command"] = CommandLinkProvider(
                template: template, service: links.service, timeout: links.timeout, concurrency: links.concurrency)
        }
        if let grants { providers["peer"] = PeerLinkProvider(grants: grants, ownerID: ownerID) }
        self.providers = providers
        self.events = events
    }

    /// The provider a request that names none gets: `peer` for a peer known by its key; else the
    /// link command when one is configured, else `file` for My Hexlist.
    /// - Throws: `ShareError.noProviderFor` for a peer that cannot fetch from this daemon when
    ///   no link command is configured: a `file://` link would open nothing there.
    func defaultProvider(for audience: ShareAudience) throws(ShareError) -> String {
        switch audience {
        case .keyedPeer where providers["peer"] != nil: return "peer"
        case _ where providers["command"] != nil: return "command"
        case .myHexlist: return "file"
        case .keyedPeer(let recipient): throw .noProviderFor(recipient.name)
        case .unkeyedPeer(let label): throw .noProviderFor(label)
        }
    }

    /// One link per path, in selection order, gathered concurrently by child tasks.
    ///
    /// The query is in the registry while it runs, so `queries` lists it and `cancel` ends it.
    /// It ends at the first failure, at `timeout`, on `cancel`, or when the calling task is
    /// cancelled (the client left); each way, the link commands still running are stopped.
    /// - Throws: `ShareError`.
    func links(
        for paths: [String], query id: UUID, provider name: String?, audience: ShareAudience,
        timeout: Duration
    ) async throws(ShareError) -> [LinkJM] {
        let providerName: String
        if let name { providerName = name } else { providerName = try defaultProvider(for: audience) }
        guard let provider = providers[providerName] else {
            throw .unknownProvider(providerName, available: providers.keys.sorted())
        }
        let (ended, ending) = AsyncStream.makeStream(
            of: QueryRegistry.Outcome.self, bufferingPolicy: .bufferingNewest(1))
        let opened = await registry.open(id: id, kind: .shareLinks, paths: paths) { outcome in
            ending.yield(outcome)
            ending.finish()
        }
        guard opened else {
            throw paths.isEmpty ? .linkFailed(path: nil, reason: "give at least one file") : .queryInFlight(id)
        }

        let unique = paths.uniqued()
        let outcome = await withTaskGroup(of: Void.self) { group -> QueryRegistry.Outcome? in
            for path in unique {
                group.addTask {
                    await answer(id, path: path, with: provider, for: audience.recipient, total: unique.count)
                }
            }
            group.addTask { await expire(id, after: timeout) }
            // The first outcome ends the query; nil means this task was cancelled first.
            var outcome: QueryRegistry.Outcome?
            for await ended in ended { outcome = ended }
            group.cancelAll()
            return outcome
        }
        // Cancelled: end the query, so it leaves the registry and cannot be answered any more.
        if outcome == nil { await registry.cancel(id) }

        switch outcome ?? .cancelled {
        case .delivered(let links):
            await events.publish(.queryFinished, id: id.uuidString, message: "delivered")
            return zip(unique, links).map { path, link in
                LinkJM(
                    url: link, linkDescription: Self.describe(path, link: link, provider: providerName),
                    service: provider.service)
            }
        case .failed(let path, let reason):
            await events.publish(.queryFinished, id: id.uuidString, message: "failed: \(reason)")
            throw .linkFailed(path: path, reason: reason)
        case .cancelled:
            await events.publish(.queryFinished, id: id.uuidString, message: "cancelled")
            throw .cancelled
        }
    }

    /// Fails the query, naming what is missing, unless it ends (and this task is cancelled) first.
    private func expire(_ id: UUID, after timeout: Duration) async {
        guard (try? await Task.sleep(for: timeout)) != nil, let progress = await registry.progress(of: id) else {
            return
        }
        await registry.fail(
            id, path: progress.waiting.first,
            reason: "no answer within \(timeout) (\(progress.waiting.count) of \(progress.total) missing)")
    }

    private func answer(
        _ id: UUID, path: String, with provider: any LinkProvider, for recipient: FileGrants.Recipient?, total: Int
    ) async {
        do {
            let link = try await provider.link(for: path, to: recipient)
            let answered: Int
            switch await registry.answer(id, path: path, link: link) {
            case .accepted: answered = await registry.answeredCount(of: id) ?? total
            case .completed: answered = total
            case .unknownQuery, .unknownPath, .slotAlreadyFilled: return
            }
            await events.publish(.queryProgress, id: id.uuidString, message: "\(answered)/\(total)")
        } catch is CancellationError {
            return
        } catch {
            await registry.fail(id, path: path, reason: "\(error)")
        }
    }

    /// What a link is called: the file's name, or the host of a URL shared as it is.
    private static func describe(_ path: String, link: String, provider: String) -> String {
        if provider == "url" { return LinkURL.parse(link).map(LinkURL.description(of:)) ?? link }
        if path.hasPrefix("file://"), let url = URL(string: path) { return url.lastPathComponent }
        return path.split(separator: "/").last.map(String.init) ?? path
    }
}

extension Array where Element: Hashable {
    /// The elements without repeats, in their first order.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
