import HexKit

/// One request to the daemon's control socket: a JSON object on one line.
///
/// `command` names what to do; the other keys are its arguments (Protocol.md, "Control API",
/// lists which command reads which). Keys a command does not read are ignored.
public struct ControlRequest: Sendable, Codable, Equatable {
    public var command: ControlCommand
    /// A hex id, or a unique prefix of one (inbox and hexlist commands).
    public var id: String?
    /// A peer: its name, its UUID or a unique prefix of it, or `HOST:PORT` (send, alert).
    public var to: String?
    public var description: String?
    /// `#RRGGBB`.
    public var color: String?
    public var links: [LinkJM]?
    /// The text of an alert.
    public var message: String?
    /// A sender UUID (block, unblock).
    public var uuid: String?
    /// Where a `watch` resumes: events with a larger sequence number are sent.
    public var since: UInt64?
    /// Whether `send` waits for the receiver's Ack (default true).
    public var wait: Bool?
    /// How long a `send` may take, in seconds.
    public var timeout: Double?
    /// The new position of a hex in My Hexlist (0 is the top).
    public var index: Int?
    /// Send as to a legacy (1.x) peer whatever the peer announced.
    public var legacy: Bool?
    /// The files (or URLs) to share, in selection order.
    public var files: [String]?
    /// The link provider: `url`, `file` or `command`.
    public var provider: String?
    /// Save the shared hex to My Hexlist (instead of sending it with `to`).
    public var save: Bool?
    /// A share query's id (chosen by the client for `share`, so it can follow the progress).
    public var query: String?
    /// Lists: at most this many items (default: all, streamed).
    public var limit: Int?
    /// Lists: start after this item (a hex id, or a peer UUID), as the previous page ended.
    public var after: String?
    /// `inbox.show`: every field and link whole, however large.
    public var full: Bool?

    public init(
        _ command: ControlCommand, id: String? = nil, to: String? = nil, description: String? = nil, color: String? = nil,
        links: [LinkJM]? = nil, message: String? = nil, uuid: String? = nil, since: UInt64? = nil, wait: Bool? = nil,
        timeout: Double? = nil, index: Int? = nil, legacy: Bool? = nil, files: [String]? = nil, provider: String? = nil,
        save: Bool? = nil, query: String? = nil, limit: Int? = nil, after: String? = nil, full: Bool? = nil
    ) {
        self.command = command
        self.id = id
        self.to = to
        self.description = description
        self.color = color
        self.links = links
        self.message = message
        self.uuid = uuid
        self.since = since
        self.wait = wait
        self.timeout = timeout
        self.index = index
        self.legacy = legacy
        self.files = files
        self.provider = provider
        self.save = save
        self.query = query
        self.limit = limit
        self.after = after
        self.full = full
    }
}

/// The commands of the control socket.
public enum ControlCommand: String, Sendable, Codable, CaseIterable {
    case status, peers, send, alert, watch
    case inboxList = "inbox.list", inboxShow = "inbox.show", inboxCheck = "inbox.check"
    case inboxDelete = "inbox.delete", inboxSave = "inbox.save"
    case hexlistList = "hexlist.list", hexlistAdd = "hexlist.add", hexlistRemove = "hexlist.remove"
    case hexlistMove = "hexlist.move", hexlistSend = "hexlist.send"
    case block, unblock, blocked
    case share, queries, cancel
}
