import HexKit

/// The daemon's answer to one request: a JSON object on one line. Exactly one of `error` and the
/// result keys is present; `watch` answers with a stream of `event` responses instead, and lists
/// with one line per item (`summary` or `peer`) and a last line with `end`.
public struct ControlResponse: Sendable, Codable {
    public var ok: Bool
    public var error: ControlError?
    public var status: StatusReport?
    public var hex: Hex?
    public var send: SendReport?
    /// A send committed to the outbox: the first line of a send's answer (the only one with
    /// `wait` false), before the outcome of its first attempt.
    public var queued: QueuedReport?
    /// A send waiting in the outbox: one item of `outbox.list`, or what `outbox.cancel` removed.
    public var outbox: OutboxItem?
    /// pair, unpair and trust.reset: how the peer's key is trusted now.
    public var trust: TrustReport?
    public var blocked: [String]?
    public var event: DaemonEvent?
    public var queries: [QueryRegistry.Progress]?
    /// One item of a hex list.
    public var summary: HexSummary?
    /// A kept Alert (`alerts.list`, one per response; `alerts.delete`).
    public var alert: ReceivedAlert?
    /// One item of the peer list.
    public var peer: PeerInfo?
    /// `visibility`: whether the daemon announces itself now.
    public var visibility: VisibilityReport?
    /// One file of a fetch, as it comes and as it ended.
    public var fetch: FetchReport?
    /// One file shared with a peer (`grants`, `revoke`).
    public var grant: FileGrant?
    /// The last line of a list.
    public var end: ListEnd?
    /// Some text of `summary` or `hex` was cut to the control protocol's bounds (`ControlLimits`).
    public var truncated: Bool?

    public init(
        error: ControlError? = nil, status: StatusReport? = nil, hex: Hex? = nil,
        send: SendReport? = nil, queued: QueuedReport? = nil, outbox: OutboxItem? = nil, trust: TrustReport? = nil,
        blocked: [String]? = nil, event: DaemonEvent? = nil, queries: [QueryRegistry.Progress]? = nil,
        summary: HexSummary? = nil, peer: PeerInfo? = nil, end: ListEnd? = nil, truncated: Bool? = nil,
        alert: ReceivedAlert? = nil, visibility: VisibilityReport? = nil, fetch: FetchReport? = nil,
        grant: FileGrant? = nil
    ) {
        self.fetch = fetch
        self.grant = grant
        self.alert = alert
        self.visibility = visibility
        self.ok = error == nil
        self.error = error
        self.status = status
        self.hex = hex
        self.send = send
        self.queued = queued
        self.outbox = outbox
        self.trust = trust
        self.blocked = blocked
        self.event = event
        self.queries = queries
        self.summary = summary
        self.peer = peer
        self.end = end
        self.truncated = truncated
    }

    /// A response that reports only success.
    public static let done = ControlResponse()
}

/// How a list ended.
public struct ListEnd: Sendable, Codable, Equatable {
    /// Items sent.
    public var count: Int
    /// More items follow the last one sent (ask again with `after` set to its id).
    public var more: Bool

    public init(count: Int, more: Bool) {
        self.count = count
        self.more = more
    }
}

/// Why a request failed. `code` is stable for scripts; `message` is for people.
public struct ControlError: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Codable {
        /// The request is malformed or lacks an argument.
        case usage
        /// No hex or peer matches (or a prefix matches several).
        case notFound
        /// The peer could not be reached, or did not answer in time: try again later.
        case unreachable
        /// Not delivered yet, for a reason worth retrying; the send waits in the outbox and the
        /// daemon tries again (do not send it again: `outbox retry` hurries it).
        case queued
        /// The peer refused (the sender is blocked there) or answered unsupported/invalid.
        case rejected
        /// Anything else (a database error, for example).
        case failed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
