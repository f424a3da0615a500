import HexKit

/// One request to the daemon's control socket: a command with exactly the arguments it needs.
///
/// On the wire a request is one flat JSON object on one line: `command` names the case and the
/// other keys are its arguments (Protocol.md, "Control API"; `ControlRequest+Wire.swift`).
/// Decoding checks every argument, so a request the daemon holds is complete and valid: a
/// missing or malformed argument is a decoding error, answered as a usage error.
public enum ControlRequest: Sendable, Equatable {
    case status
    case peers(ListPage)
    /// Ask every kind of peer on the LAN who is there now (`hexctl peers --refresh`).
    case refreshPeers
    /// Send a one-off hex.
    case send(HexDraft, SendOptions)
    /// Send a message for the peer's user.
    case alert(message: String, SendOptions)
    /// Stream events with a sequence number above `since`.
    case watch(since: UInt64)
    case inboxList(ListPage)
    /// `full`: every field and link whole, however large.
    case inboxShow(id: String, full: Bool)
    case inboxCheck(id: String)
    case inboxDelete(id: String)
    case inboxSave(id: String)
    case hexlistList(ListPage)
    case hexlistAdd(HexDraft)
    case hexlistRemove(id: String)
    /// `index`: the new position, 0 is the top.
    case hexlistMove(id: String, index: Int)
    case hexlistSend(id: String, SendOptions)
    /// `sender`: a sender UUID, or a peer's name or unique UUID prefix.
    case block(sender: String)
    case unblock(sender: String)
    case blocked
    case share(ShareRequest)
    case queries
    /// `query`: a share query's id, or a unique prefix of one.
    case cancel(query: String)
    /// Ask a peer to pair (`accept` false), or accept its request (`accept` true). `peer`: a
    /// peer's name, or its UUID or a unique prefix of one.
    case pair(peer: String, accept: Bool, timeout: Duration?)
    /// Drop the pairing request a peer sent, unaccepted.
    case declinePairing(peer: String)
    /// Turn a peer's paired key back into a key pinned on first use.
    case unpair(peer: String)
    /// Forget the key pinned to a peer (it was reinstalled): the next key it proves is pinned.
    /// `peer`: a peer's name or UUID prefix, or any peer UUID.
    case resetTrust(peer: String)
    /// List the sends waiting in the outbox, soonest next attempt first (`after`: a messageID).
    case outboxList(ListPage)
    /// Attempt a queued send now; `id` is its messageID or a unique prefix of one.
    case outboxRetry(id: String, timeout: Duration?)
    /// Remove a queued send from the outbox.
    case outboxCancel(id: String)
    /// List the Alerts peers sent, newest first (`after`: an alert id).
    case alertsList(ListPage)
    /// Delete a kept Alert; `id` is its id or a unique prefix of one.
    case alertsDelete(id: String)
    /// The daemon's visibility, changed first when a change is given.
    case visibility(VisibilityChange?)
    /// Fetch the files a peer shared in a received hex.
    case fetch(FetchRequest)
    /// List the files this daemon shared with peers, newest first.
    case grants
    /// Revoke a grant; `id` is its id or a unique prefix of one.
    case revoke(id: String)

    /// The command's name on the wire.
    public var command: ControlCommand {
        switch self {
        case .status: .status
        case .peers: .peers
        case .refreshPeers: .refreshPeers
        case .send: .send
        case .alert: .alert
        case .watch: .watch
        case .inboxList: .inboxList
        case .inboxShow: .inboxShow
        case .inboxCheck: .inboxCheck
        case .inboxDelete: .inboxDelete
        case .inboxSave: .inboxSave
        case .hexlistList: .hexlistList
        case .hexlistAdd: .hexlistAdd
        case .hexlistRemove: .hexlistRemove
        case .hexlistMove: .hexlistMove
        case .hexlistSend: .hexlistSend
        case .block: .block
        case .unblock: .unblock
        case .blocked: .blocked
        case .share: .share
        case .queries: .queries
        case .cancel: .cancel
        case .pair: .pair
        case .declinePairing: .declinePairing
        case .unpair: .unpair
        case .resetTrust: .resetTrust
        case .outboxList: .outboxList
        case .outboxRetry: .outboxRetry
        case .outboxCancel: .outboxCancel
        case .alertsList: .alertsList
        case .alertsDelete: .alertsDelete
        case .visibility: .visibility
        case .fetch: .fetch
        case .grants: .grants
        case .revoke: .revoke
        }
    }
}

/// The commands of the control socket, by their wire names.
public enum ControlCommand: String, Sendable, Codable, CaseIterable {
    case status, peers, send, alert, watch
    case refreshPeers = "peers.refresh"
    case inboxList = "inbox.list"
    case inboxShow = "inbox.show"
    case inboxCheck = "inbox.check"
    case inboxDelete = "inbox.delete"
    case inboxSave = "inbox.save"
    case hexlistList = "hexlist.list"
    case hexlistAdd = "hexlist.add"
    case hexlistRemove = "hexlist.remove"
    case hexlistMove = "hexlist.move"
    case hexlistSend = "hexlist.send"
    case block, unblock, blocked
    case share, queries, cancel
    case pair
    case declinePairing = "pair.decline"
    case unpair
    case resetTrust = "trust.reset"
    case outboxList = "outbox.list"
    case outboxRetry = "outbox.retry"
    case outboxCancel = "outbox.cancel"
    case alertsList = "alerts.list"
    case alertsDelete = "alerts.delete"
    case visibility
    case fetch, grants, revoke
}

/// Which part of a list to send.
public struct ListPage: Sendable, Equatable {
    /// At most this many items (at least 1); nil sends them all, streamed.
    public var limit: Int?
    /// Start after this item (a hex id, or a peer UUID), as the previous page ended.
    public var after: UUID?

    public init(limit: Int? = nil, after: UUID? = nil) {
        self.limit = limit
        self.after = after
    }
}

/// A hex the user describes: at least one link.
public struct HexDraft: Sendable, Equatable {
    public var description: String
    /// `#RRGGBB`; the daemon refuses another form.
    public var color: String
    /// Never empty.
    public var links: [LinkJM]

    public init(description: String = "", color: String = HexColor.fallback, links: [LinkJM]) {
        self.description = description
        self.color = color
        self.links = links
    }
}

/// Where and how a hex or an alert is sent.
public struct SendOptions: Sendable, Equatable {
    /// A peer: its name, its UUID or a unique prefix of it, or `HOST:PORT`.
    public var to: String
    /// Wait for the receiver's Ack; false returns once the send is queued (or, without `queue`,
    /// once the envelope is written).
    public var wait: Bool
    /// How long the first attempt may take; nil is `defaultTimeout` (pairing too).
    public var timeout: Duration?
    public static let defaultTimeout = Duration.seconds(5)
    /// Send as to a legacy (1.x) peer whatever the peer announced.
    public var legacy: Bool
    /// Commit the send to the outbox first, so it is retried until acked or expired; false sends
    /// once and forgets.
    public var queue: Bool
    /// The envelope's messageID, chosen by the client so that repeating an uncertain send cannot
    /// deliver it twice; nil lets the daemon choose.
    public var messageID: UUID?

    public init(
        to: String, wait: Bool = true, timeout: Duration? = nil, legacy: Bool = false, queue: Bool = true,
        messageID: UUID? = nil
    ) {
        self.to = to
        self.wait = wait
        self.timeout = timeout
        self.legacy = legacy
        self.queue = queue
        self.messageID = messageID
    }
}

/// Turn files into a hex of share links, then save it or send it.
public struct ShareRequest: Sendable, Equatable {
    /// What becomes of the hex once every file has its link.
    public enum Destination: Sendable, Equatable {
        case myHexlist
        case peer(SendOptions)
    }

    /// The files (or URLs) to share, in selection order; never empty.
    public var files: [String]
    /// The link provider (`url`, `file` or `command`); nil is the daemon's default.
    public var provider: String?
    /// The query's id, chosen by the client so it can follow the progress; nil lets the daemon choose.
    public var query: UUID?
    /// How long gathering the links may take; nil is `defaultGatherTimeout`.
    public var gatherTimeout: Duration?
    public static let defaultGatherTimeout = Duration.seconds(120)
    public var description: String
    public var color: String
    public var destination: Destination

    public init(
        files: [String], provider: String? = nil, query: UUID? = nil, gatherTimeout: Duration? = nil,
        description: String = "", color: String = HexColor.fallback, destination: Destination
    ) {
        self.files = files
        self.provider = provider
        self.query = query
        self.gatherTimeout = gatherTimeout
        self.description = description
        self.color = color
        self.destination = destination
    }
}
