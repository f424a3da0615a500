import HexControl
import HexKit

/// Turns a selection of files into links through a provider, one query wrapper per request.
struct ShareService: Sendable {
    let registry = QueryRegistry()
    let providers: [String: any LinkProvider]
    /// The provider used when a request names none.
    let defaultProvider: String
    let events: EventLog

    init(configuration: DaemonConfiguration, events: EventLog) {
        var providers: [String: any LinkProvider] = ["url": URLLinkProvider(), "file": FileLinkProvider()]
        if let template = configuration.linkCommand {
            providers["command"] = CommandLinkProvider(template: template, service: configuration.linkService,
                                                       timeout: configuration.linkTimeout, concurrency: configuration.linkConcurrency)
        }
        self.providers = providers
        defaultProvider = configuration.linkCommand == nil ? "file" : "command"
        self.events = events
    }

    /// One link per path, in selection order, gathered concurrently.
    ///
    /// - Throws: `ControlError` naming the file whose link failed (the first failure ends the
    ///   query and stops the rest), or saying the query was cancelled or ran out of time.
    func links(for paths: [String], query id: UUID, provider name: String?, timeout: Duration) async throws -> [LinkJM] {
        let providerName = name ?? defaultProvider
        guard let provider = providers[providerName] else {
            throw ControlError(.usage, "no link provider \"\(providerName)\"; this daemon has: \(providers.keys.sorted().joined(separator: ", "))"
                + (providerName == "command" ? " (configure one with --link-command)" : ""))
        }
        let ended = AsyncStream.makeStream(of: QueryRegistry.Outcome.self)
        let opened = await registry.open(id: id, kind: .shareLinks, paths: paths, deadline: .now + timeout) { outcome in
            ended.continuation.yield(outcome)
            ended.continuation.finish()
        }
        guard opened else { throw ControlError(.usage, paths.isEmpty ? "give at least one file" : "a query \(id.uuidString) is in flight already") }

        let unique = paths.uniqued()
        let workers = Task {
            await withTaskGroup(of: Void.self) { group in
                for path in unique {
                    group.addTask { await answer(id, path: path, with: provider, total: unique.count) }
                }
            }
        }
        let deadline = Task {
            try await Task.sleep(for: timeout)
            await registry.expire(at: .now)
        }
        var outcome = QueryRegistry.Outcome.cancelled
        for await ended in ended.stream { outcome = ended }
        workers.cancel()
        deadline.cancel()

        switch outcome {
        case .delivered(let links):
            await events.publish(.queryFinished, id: id.uuidString, message: "delivered")
            return zip(unique, links).map { path, link in
                LinkJM(url: link, linkDescription: Self.describe(path, link: link, provider: providerName), service: provider.service)
            }
        case .failed(let path, let reason):
            await events.publish(.queryFinished, id: id.uuidString, message: "failed: \(reason)")
            throw ControlError(.failed, path.map { "\($0): \(reason)" } ?? reason)
        case .cancelled:
            await events.publish(.queryFinished, id: id.uuidString, message: "cancelled")
            throw ControlError(.failed, "the share was cancelled")
        }
    }

    private func answer(_ id: UUID, path: String, with provider: any LinkProvider, total: Int) async {
        do {
            let link = try await provider.link(for: path)
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
