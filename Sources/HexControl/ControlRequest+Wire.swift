import HexKit

/// The wire form of a request: one flat object, `command` and the arguments it takes.
///
/// Decoding is where every argument is checked; keys a command does not take are ignored, so
/// an older daemon can be sent a newer client's optional keys.
extension ControlRequest: Codable {
    enum Key: String, CodingKey {
        case command, id, to, description, color, links, message, uuid, since, wait, timeout
        case sendTimeout, index, legacy, files, provider, save, query, limit, after, full, peer, accept, queue,
            messageID
        case visibility, seconds, numbers, downloads
    }

    public init(from decoder: any Decoder) throws {
        let wire = WireRequest(try decoder.container(keyedBy: Key.self))
        switch try wire.container.decode(ControlCommand.self, forKey: .command) {
        case .status: self = .status
        case .peers: self = .peers(try wire.page())
        case .refreshPeers: self = .refreshPeers
        case .send: self = .send(try wire.draft(), try wire.sendOptions(timeoutKey: .timeout))
        case .alert:
            self = .alert(
                message: try wire.container.decode(String.self, forKey: .message),
                try wire.sendOptions(timeoutKey: .timeout))
        case .watch: self = .watch(since: try wire.container.decodeIfPresent(UInt64.self, forKey: .since) ?? 0)
        case .inboxList: self = .inboxList(try wire.page())
        case .inboxShow: self = .inboxShow(id: try wire.nonEmpty(.id), full: try wire.flag(.full))
        case .inboxCheck: self = .inboxCheck(id: try wire.nonEmpty(.id))
        case .inboxDelete: self = .inboxDelete(id: try wire.nonEmpty(.id))
        case .inboxSave: self = .inboxSave(id: try wire.nonEmpty(.id))
        case .hexlistList: self = .hexlistList(try wire.page())
        case .hexlistAdd: self = .hexlistAdd(try wire.draft())
        case .hexlistRemove: self = .hexlistRemove(id: try wire.nonEmpty(.id))
        case .hexlistMove: self = .hexlistMove(id: try wire.nonEmpty(.id), index: try wire.position())
        case .hexlistSend: self = .hexlistSend(id: try wire.nonEmpty(.id), try wire.sendOptions(timeoutKey: .timeout))
        case .block: self = .block(sender: try wire.nonEmpty(.uuid))
        case .unblock: self = .unblock(sender: try wire.nonEmpty(.uuid))
        case .blocked: self = .blocked
        case .share: self = .share(try wire.share())
        case .queries: self = .queries
        case .cancel: self = .cancel(query: try wire.nonEmpty(.query))
        case .pair:
            self = .pair(
                peer: try wire.nonEmpty(.peer), accept: try wire.flag(.accept), timeout: try wire.timeout(.timeout))
        case .declinePairing: self = .declinePairing(peer: try wire.nonEmpty(.peer))
        case .unpair: self = .unpair(peer: try wire.nonEmpty(.peer))
        case .resetTrust: self = .resetTrust(peer: try wire.nonEmpty(.peer))
        case .outboxList: self = .outboxList(try wire.page())
        case .outboxRetry: self = .outboxRetry(id: try wire.nonEmpty(.id), timeout: try wire.timeout(.timeout))
        case .outboxCancel: self = .outboxCancel(id: try wire.nonEmpty(.id))
        case .alertsList: self = .alertsList(try wire.page())
        case .alertsDelete: self = .alertsDelete(id: try wire.nonEmpty(.id))
        case .visibility: self = .visibility(try wire.visibilityChange())
        case .fetch: self = .fetch(try wire.fetch())
        case .grants: self = .grants
        case .revoke: self = .revoke(id: try wire.nonEmpty(.id))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(command, forKey: .command)
        switch self {
        case .status, .refreshPeers, .blocked, .queries, .grants:
            break
        case .peers(let page), .inboxList(let page), .hexlistList(let page), .outboxList(let page),
            .alertsList(let page):
            try container.encodeIfPresent(page.limit, forKey: .limit)
            try container.encodeIfPresent(page.after, forKey: .after)
        case .send(let draft, let options):
            try Self.encode(draft, in: &container)
            try Self.encode(options, timeoutKey: .timeout, in: &container)
        case .alert(let message, let options):
            try container.encode(message, forKey: .message)
            try Self.encode(options, timeoutKey: .timeout, in: &container)
        case .watch(let since):
            try container.encode(since, forKey: .since)
        case .inboxShow(let id, let full):
            try container.encode(id, forKey: .id)
            if full { try container.encode(true, forKey: .full) }
        case .inboxCheck(let id), .inboxDelete(let id), .inboxSave(let id), .hexlistRemove(let id),
            .outboxCancel(let id), .alertsDelete(let id), .revoke(let id):
            try container.encode(id, forKey: .id)
        case .hexlistAdd(let draft):
            try Self.encode(draft, in: &container)
        case .hexlistMove(let id, let index):
            try container.encode(id, forKey: .id)
            try container.encode(index, forKey: .index)
        case .hexlistSend(let id, let options):
            try container.encode(id, forKey: .id)
            try Self.encode(options, timeoutKey: .timeout, in: &container)
        case .block(let sender), .unblock(let sender):
            try container.encode(sender, forKey: .uuid)
        case .share(let share):
            try container.encode(share.files, forKey: .files)
            try container.encodeIfPresent(share.provider, forKey: .provider)
            try container.encodeIfPresent(share.query, forKey: .query)
            try container.encodeIfPresent(share.gatherTimeout?.inSeconds, forKey: .timeout)
            try container.encode(share.description, forKey: .description)
            try container.encode(share.color, forKey: .color)
            switch share.destination {
            case .myHexlist: try container.encode(true, forKey: .save)
            case .peer(let options): try Self.encode(options, timeoutKey: .sendTimeout, in: &container)
            }
        case .cancel(let query):
            try container.encode(query, forKey: .query)
        case .pair(let peer, let accept, let timeout):
            try container.encode(peer, forKey: .peer)
            if accept { try container.encode(true, forKey: .accept) }
            try container.encodeIfPresent(timeout?.inSeconds, forKey: .timeout)
        case .declinePairing(let peer), .unpair(let peer), .resetTrust(let peer):
            try container.encode(peer, forKey: .peer)
        case .outboxRetry(let id, let timeout):
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(timeout?.inSeconds, forKey: .timeout)
        case .fetch(let fetch):
            try container.encode(fetch.hex, forKey: .id)
            if !fetch.numbers.isEmpty { try container.encode(fetch.numbers, forKey: .numbers) }
            try container.encodeIfPresent(fetch.downloads, forKey: .downloads)
        case .visibility(let change):
            switch change {
            case nil: break
            case .visible?: try container.encode("visible", forKey: .visibility)
            case .hidden?: try container.encode("hidden", forKey: .visibility)
            case .visibleFor(let duration)?:
                try container.encode("visible", forKey: .visibility)
                try container.encode(duration.inSeconds, forKey: .seconds)
            }
        }
    }

    private static func encode(_ draft: HexDraft, in container: inout KeyedEncodingContainer<Key>) throws {
        try container.encode(draft.description, forKey: .description)
        try container.encode(draft.color, forKey: .color)
        try container.encode(draft.links, forKey: .links)
    }

    private static func encode(_ options: SendOptions, timeoutKey: Key, in container: inout KeyedEncodingContainer<Key>)
        throws
    {
        try container.encode(options.to, forKey: .to)
        if !options.wait { try container.encode(false, forKey: .wait) }
        try container.encodeIfPresent(options.timeout?.inSeconds, forKey: timeoutKey)
        if options.legacy { try container.encode(true, forKey: .legacy) }
        if !options.queue { try container.encode(false, forKey: .queue) }
        try container.encodeIfPresent(options.messageID, forKey: .messageID)
    }
}

/// Reads and checks the arguments of a request's flat object.
private struct WireRequest {
    typealias Key = ControlRequest.Key
    let container: KeyedDecodingContainer<Key>

    init(_ container: KeyedDecodingContainer<Key>) {
        self.container = container
    }

    /// The most a timeout may be: a day.
    static let longestTimeout: Double = 86_400

    func nonEmpty(_ key: Key) throws -> String {
        let text = try container.decode(String.self, forKey: key)
        guard !text.isEmpty else { throw invalid(key, "must not be empty") }
        return text
    }

    func flag(_ key: Key) throws -> Bool {
        try container.decodeIfPresent(Bool.self, forKey: key) ?? false
    }

    func page() throws -> ListPage {
        let limit = try container.decodeIfPresent(Int.self, forKey: .limit)
        if let limit, limit < 1 { throw invalid(.limit, "must be 1 or more") }
        return ListPage(limit: limit, after: try uuid(.after))
    }

    func uuid(_ key: Key) throws -> UUID? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let id = UUID(uuidString: text) else {
            throw invalid(key, "must be a UUID, not '\(text.clipped(toUTF8: 40))'")
        }
        return id
    }

    func position() throws -> Int {
        let index = try container.decode(Int.self, forKey: .index)
        guard index >= 0 else { throw invalid(.index, "must be 0 or more") }
        return index
    }

    func timeout(_ key: Key) throws -> Duration? {
        guard let seconds = try container.decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard seconds > 0, let duration = Duration.seconds(validating: seconds, in: 0...Self.longestTimeout) else {
            throw invalid(key, "must be seconds, more than 0 and at most \(Int(Self.longestTimeout))")
        }
        return duration
    }

    func draft() throws -> HexDraft {
        let links = try container.decode([LinkJM].self, forKey: .links)
        guard !links.isEmpty else { throw invalid(.links, "a hex needs at least one link") }
        return HexDraft(
            description: try container.decodeIfPresent(String.self, forKey: .description) ?? "",
            color: try container.decodeIfPresent(String.self, forKey: .color) ?? HexColor.fallback, links: links)
    }

    func sendOptions(timeoutKey: Key) throws -> SendOptions {
        SendOptions(
            to: try nonEmpty(.to), wait: try container.decodeIfPresent(Bool.self, forKey: .wait) ?? true,
            timeout: try timeout(timeoutKey), legacy: try flag(.legacy),
            queue: try container.decodeIfPresent(Bool.self, forKey: .queue) ?? true, messageID: try uuid(.messageID))
    }

    func share() throws -> ShareRequest {
        let files = try container.decode([String].self, forKey: .files)
        guard !files.isEmpty else { throw invalid(.files, "give at least one file") }
        let save = try flag(.save)
        guard save != container.contains(.to) else {
            throw invalid(.to, "a share needs either \"to\" (a peer) or \"save\"")
        }
        return ShareRequest(
            files: files, provider: try container.decodeIfPresent(String.self, forKey: .provider),
            query: try uuid(.query),
            gatherTimeout: try timeout(.timeout),
            description: try container.decodeIfPresent(String.self, forKey: .description) ?? "",
            color: try container.decodeIfPresent(String.self, forKey: .color) ?? HexColor.fallback,
            destination: save ? .myHexlist : .peer(try sendOptions(timeoutKey: .sendTimeout)))
    }

    /// A hex id, link numbers from 1 (at most `maximumFetchNumbers`), and an absolute folder.
    func fetch() throws -> FetchRequest {
        let numbers = try container.decodeIfPresent([Int].self, forKey: .numbers) ?? []
        guard numbers.count <= Self.maximumFetchNumbers else {
            throw invalid(.numbers, "at most \(Self.maximumFetchNumbers) link numbers")
        }
        guard numbers.allSatisfy({ $0 >= 1 }) else { throw invalid(.numbers, "link numbers start at 1") }
        let downloads = try container.decodeIfPresent(String.self, forKey: .downloads)
        if let downloads, !downloads.hasPrefix("/") { throw invalid(.downloads, "must be an absolute path") }
        return FetchRequest(hex: try nonEmpty(.id), numbers: numbers, downloads: downloads)
    }

    /// The most link numbers one fetch names.
    static let maximumFetchNumbers = 1_000

    /// `visibility` (`visible` or `hidden`) and, with `visible`, `seconds` (a visibility for a
    /// while); neither: no change.
    func visibilityChange() throws -> VisibilityChange? {
        let seconds = try timeout(.seconds)
        switch try container.decodeIfPresent(String.self, forKey: .visibility) {
        case nil:
            guard seconds == nil else { throw invalid(.seconds, "goes with \"visibility\": \"visible\"") }
            return nil
        case "visible":
            return seconds.map(VisibilityChange.visibleFor) ?? .visible
        case "hidden":
            guard seconds == nil else { throw invalid(.seconds, "goes with \"visibility\": \"visible\"") }
            return .hidden
        case let other?:
            throw invalid(.visibility, "must be \"visible\" or \"hidden\", not '\(other.clipped(toUTF8: 40))'")
        }
    }

    private func invalid(_ key: Key, _ reason: String) -> DecodingError {
        .dataCorruptedError(forKey: key, in: container, debugDescription: reason)
    }
}
