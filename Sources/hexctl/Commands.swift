import HexCommandLine
import HexControl
import HexKit
import HexNet

/// Every hexctl command, in the order help lists them.
let commands: [Command] =
    [
        Command("status", summary: "Show the daemon's identity, ports, counts, counters, inbox budgets and disk space.")
        {
            invocation in
            printResult(try await invocation.result(\.status, of: .status), invocation) { Output.status($0) }
        },
        Command(
            "peers",
            summary:
                "List the peers discovered on the network: hexd daemons, LocalSend, KDE Connect and Quick Share "
                + "devices.",
            options: listOptions(cursor: "uuid", naming: "peer UUID") + [
                Option(
                    .refresh,
                    help: "Ask the LAN who is there first (a beacon query, a LocalSend announcement, a KDE Connect "
                        + "identity), and list after a second for their answers; phones nearby are woken for a "
                        + "minute by a Bluetooth LE advertisement, so that they list themselves as Quick Share "
                        + "receivers (--quickshare-bluetooth).")
            ]
        ) { invocation in
            if invocation.arguments.flag(.refresh) {
                _ = try await invocation.request(.refreshPeers, timeout: .seconds(10))
                try await Task.sleep(for: refreshWait)
            }
            var peers: [PeerInfo] = []
            let end = try await invocation.list(ControlRequest.peers) { response in
                guard let peer = response.peer else { return }
                if invocation.json { printOutput(json(peer)) } else { peers.append(peer) }
            }
            if !invocation.json { printOutput(Output.peers(peers)) }
            noteMore(end, last: peers.last?.uuid, invocation)
            return .success
        },
        Command(
            "send", "[<url> ...]",
            arguments: [
                (
                    "url",
                    "A link to send: a URL with a scheme and a host, or a file:// URL. "
                        + "Described by its host (or file name)."
                )
            ], summary: "Send a hex of links to a peer and wait for its acknowledgement.",
            details: """
                The links come from the URL arguments and/or --file. The peer is a name, a UUID (or a unique
                prefix of one) from 'hexctl peers', or HOST:PORT ([fd00::2]:18521 for IPv6). A peer that
                announced a 1.x version (or --legacy) is sent only what the original app understood, and
                sends no acknowledgement. A LocalSend device (its alias or localsend: ID) gets the hex as one
                message: a lone link with no description as the bare address, else the description and one
                address per line; its person may take up to five minutes to answer, and hexd waits for them
                in the background; one it showed is never offered twice. A paired KDE Connect device (its
                name or kdeconnect: ID) gets a lone link with no description as a URL it opens, else a text
                with the description and one address per line, which a phone or tablet also gets as a ping it
                shows as a notification; KDE Connect confirms nothing, so the send is done once written to
                the device's link. A Quick Share receiver (a phone in its receive screen, or Google's Windows
                app; its name or quickshare: ID) gets a lone link with no description as a URL, else the same
                text; its person accepts it (both screens show the same PIN) within a minute, and the send is
                done once the receiver took it.

                \(queueingHelp)
                """,
            options: [receivingPeer] + HexInput.options + sendOptions()
        ) { invocation in
            let draft = try HexInput(invocation, urls: invocation.arguments.positionals).draft
            let options = try sendOptions(invocation)
            return try await send(.send(draft, options), options, invocation)
        },
        Command(
            "alert", "<message> ...", arguments: [("message", "The words of the message, joined with spaces.")],
            summary: "Send a peer a message to show its user (several words are joined with spaces).",
            details: queueingHelp,
            options: [receivingPeer] + sendOptions()
        ) { invocation in
            let options = try sendOptions(invocation)
            guard !invocation.arguments.positionals.isEmpty else { throw UsageError("give a message") }
            return try await send(
                .alert(message: invocation.arguments.positionals.joined(separator: " "), options), options, invocation)
        },
        Command(
            "inbox", summary: "List the inbox, newest first; * marks an unchecked hex.",
            options: listOptions(cursor: "id", naming: "hex id")
        ) { invocation in
            try await listHexes(ControlRequest.inboxList, invocation, empty: "the inbox is empty")
        },
        Command(
            "inbox show", "<id>",
            arguments: [("id", "A hex id from the inbox or My Hexlist, or a unique prefix of one (any case).")],
            summary: "Show a hex (inbox or My Hexlist) with its links and mark it checked; the id may be a prefix.",
            details: """
                Fields longer than \(ControlLimits.showFieldBytes) bytes \
                and links past the first \(ControlLimits.showLinks) are left out,
                and the output says so; --full shows everything.
                """,
            options: [Option(.full, help: "Show every field and link whole, however large.")]
        ) { invocation in
            let full = invocation.arguments.flag(.full)
            let request = ControlRequest.inboxShow(id: try single(invocation, "a hex id"), full: full)
            let response = try await invocation.request(
                request,
                maximumResponseLength: full ? ControlLimits.fullResponseLineBytes : ControlLimits.responseLineBytes)
            guard let hex = response.hex else {
                throw CommandFailure(.failure, "the daemon's answer to inbox show lacks its result")
            }
            if invocation.json {
                printOutput(json(Listed(hex, truncated: response.truncated == true)))
            } else {
                printOutput(Output.hexDetail(hex))
                if response.truncated == true {
                    printOutput(
                        "(long fields and links were left out; "
                            + "hexctl inbox show --full \(hex.id.uuidString) shows everything)"
                    )
                }
            }
            return .success
        },
        Command(
            "inbox check", "<id>", arguments: [("id", "An inbox hex id, or a unique prefix of one.")],
            summary: "Mark an inbox hex as checked."
        ) { invocation in try await showHex({ .inboxCheck(id: $0) }, invocation) },
        Command(
            "inbox delete", "<id>", arguments: [("id", "An inbox hex id, or a unique prefix of one.")],
            summary: "Delete a hex from the inbox."
        ) { invocation in try await showHex({ .inboxDelete(id: $0) }, invocation) },
        Command(
            "inbox save", "<id>", arguments: [("id", "An inbox hex id, or a unique prefix of one.")],
            summary: "Save a copy of an inbox hex on top of My Hexlist (it keeps its sender)."
        ) { invocation in
            try await showHex({ .inboxSave(id: $0) }, invocation)
        },
        Command(
            "hexlist", summary: "List My Hexlist in its order.", options: listOptions(cursor: "id", naming: "hex id")
        ) {
            invocation in
            try await listHexes(ControlRequest.hexlistList, invocation, empty: "My Hexlist is empty")
        },
        Command(
            "hexlist add", "[<url> ...]",
            arguments: [("url", "A link of the hex: a URL with a scheme and a host, or a file:// URL.")],
            summary: "Add a hex of your own on top of My Hexlist.", options: HexInput.options
        ) { invocation in
            let request = ControlRequest.hexlistAdd(
                try HexInput(invocation, urls: invocation.arguments.positionals).draft)
            return printResult(try await invocation.result(\.hex, of: request), invocation) { Output.hexDetail($0) }
        },
        Command(
            "hexlist remove", "<id>", arguments: [("id", "A My Hexlist hex id, or a unique prefix of one.")],
            summary: "Delete a hex from My Hexlist."
        ) { invocation in try await showHex({ .hexlistRemove(id: $0) }, invocation) },
        Command(
            "hexlist move", "<id> <index>",
            arguments: [
                ("id", "A My Hexlist hex id, or a unique prefix of one."),
                ("index", "Its new position: 0 is the top; past the end is the bottom."),
            ], summary: "Move a hex of My Hexlist to a position (0 is the top)."
        ) { invocation in
            let words = invocation.arguments.positionals
            guard words.count == 2, let index = Int(words[1]), index >= 0 else {
                throw UsageError("give a hex id and a position (0 or more)")
            }
            return printResult(
                try await invocation.result(\.hex, of: .hexlistMove(id: words[0], index: index)), invocation
            ) { Output.hexLine(HexSummary($0)) }
        },
        Command(
            "hexlist send", "<id>", arguments: [("id", "A My Hexlist hex id, or a unique prefix of one.")],
            summary: "Send a hex of My Hexlist to a peer and wait for its acknowledgement.",
            details: queueingHelp,
            options: [receivingPeer] + sendOptions()
        ) { invocation in
            let options = try sendOptions(invocation)
            return try await send(.hexlistSend(id: try single(invocation, "a hex id"), options), options, invocation)
        },
    ] + shareCommands + trustCommands + outboxCommands + alertCommands + openCommands + visibilityCommands
    + fetchCommands + [
        Command(
            "block", "<sender>",
            arguments: [
                (
                    "sender",
                    "A sender UUID, a device's ID of another protocol (localsend:…, kdeconnect:…), or the name "
                        + "or a unique UUID prefix of a peer in the table."
                )
            ],
            summary: "Refuse hexes, alerts and fetches of shared files from a sender: a UUID, a device's ID, or a "
                + "peer's name or UUID prefix (it is told \"<your name> blocked you.\"). A device nothing proves "
                + "(a LocalSend device with its encryption off, a Quick Share device) cannot be blocked."
        ) { invocation in
            let blocked = try await invocation.result(
                \.blocked, of: .block(sender: try single(invocation, "a sender UUID or peer")))
            return printResult(blocked, invocation) { "blocked: " + $0.joined(separator: ", ") }
        },
        Command(
            "unblock", "<sender>",
            arguments: [("sender", "A sender UUID, or the name or a unique UUID prefix of a peer in the table.")],
            summary: "Accept hexes and alerts from a sender again: "
                + "a UUID, or a peer's name or UUID prefix."
        ) { invocation in
            let blocked = try await invocation.result(
                \.blocked, of: .unblock(sender: try single(invocation, "a sender UUID or peer")))
            return printResult(blocked, invocation) {
                $0.isEmpty ? "nobody is blocked" : "blocked: " + $0.joined(separator: ", ")
            }
        },
        Command("blocked", summary: "List the blocked sender UUIDs.") { invocation in
            printResult(try await invocation.result(\.blocked, of: .blocked), invocation) {
                $0.isEmpty ? "nobody is blocked" : $0.joined(separator: "\n")
            }
        },
        Command(
            "wait", summary: "Wait until the daemon answers, and with --peer until that peer is listed; for scripts.",
            details: """
                Tries every 100 ms. The daemon is ready once it answers and is every kind of device it is
                asked to be (its LocalSend and KDE Connect devices start just after it serves, and take up to
                a second on a first start). Exits 0 once it holds, 75 when --timeout passes first (the daemon
                never answered, or the peer never appeared).
                """,
            options: [
                Option(
                    .peer, value: "peer",
                    help: "Also wait until this peer (a name, or a UUID prefix) is in the peer table."),
                Option(.timeout, value: "seconds", help: "How long to wait. Default: 30."),
            ]
        ) { invocation in
            try await waitUntilReady(invocation)
        },
        Command(
            "watch", summary: "Print the daemon's events as they happen, until interrupted.",
            details: """
                Events: peerFound, peerLost, hexReceived, alertReceived, sendQueued, sendRetrying, sendAcked,
                sendFailed, queryProgress, queryFinished, peerKeyMismatch, pairRequested and paired, \
                each with a sequence number that
                increases by one. --since N first replays the retained events after N
                (the last 1000 are kept), so a script can resume where it stopped.
                --until KIND ends the watch with exit 0 once an event of that kind is printed (a replayed
                one counts: pass --since to skip those); with --timeout, exit 75 if none came in time.
                """,
            options: [
                Option(
                    .since, value: "seq",
                    help: "Start after this sequence number (default: 0, everything retained)."),
                Option(.until, value: "kind", help: "Stop after printing the first event of this kind."),
                Option(.timeout, value: "seconds", help: "With --until: how long to wait for it (default: no limit)."),
            ]
        ) { invocation in
            try await watch(invocation)
        },
        Command(
            "raw", "<host:port> <file>",
            arguments: [
                ("host:port", "Where a peer listens for envelopes."),
                ("file", "The envelope lines to send as they are; - for standard input."),
            ], summary: "Send an envelope file to a peer as-is and print every reply (version-skew testing).",
            details: """
                Connects to HOST:PORT ([IPV6]:PORT) directly (no daemon needed), writes the file's bytes
                (one envelope per line; a final newline is added if missing), then prints each line the peer
                sends back until it closes the connection or stays silent for --timeout seconds.
                """,
            options: [Option(.timeout, value: "seconds", help: "How long to wait for more replies. Default: 2.")],
            usesDaemon: false
        ) { invocation in
            try await runRaw(invocation)
        },
        Command(
            "decode", "[<file>]",
            arguments: [("file", "Envelope lines to read, one per line; standard input when none or -.")],
            summary: "Show how hexd reads envelopes (one per line) from a file or standard input.",
            details: """
                Each line is shown after the tolerance rules, with the hex it would store (defaults filled in),
                or why it is not an envelope. Blank lines are skipped. Needs no daemon. Exits 1 if any line is
                not an envelope, or when the input is over 64 MiB (hexctl reads no more from a file or
                standard input: decode, raw and --file alike).
                """, usesDaemon: false
        ) { invocation in
            try runDecode(invocation)
        },
    ]

/// The options of the list commands.
/// `--limit` and `--after` of a list; `cursor` is `--after`'s placeholder, `naming` what it is.
func listOptions(cursor: String, naming item: String) -> [Option] {
    [
        Option(.limit, value: "n", help: "List at most this many (default: all)."),
        Option(.after, value: cursor, help: "Start after this \(item), where the previous page ended."),
    ]
}

/// Prints a list of `item`s as it arrives, one per response: `line` each, or a JSON object per
/// line; `cursor` names an item for `--after`.
func listItems<Item: Encodable>(
    _ make: (ListPage) -> ControlRequest, _ item: KeyPath<ControlResponse, Item?>, _ invocation: Invocation,
    empty: String, cursor: (Item) -> String, line: (Item) -> String
) async throws -> ExitCode {
    var last: Item?
    let end = try await invocation.list(make) { response in
        guard let value = response[keyPath: item] else { return }
        last = value
        printOutput(invocation.json ? json(value) : line(value))
    }
    if end.count == 0 && !invocation.json { printOutput(empty) }
    noteMore(end, last: last.map(cursor), invocation)
    return .success
}

/// `--to` of the commands that send to a peer.
/// How long `peers --refresh` waits for answers: peers on a LAN answer a query within milliseconds,
/// and LocalSend devices are proven by a TLS handshake each.
let refreshWait = Duration.seconds(1)

let receivingPeer = Option(
    .to, value: "peer", required: true,
    help:
        "The receiving peer: a name, a UUID or localsend:, kdeconnect: or quickshare: ID or a unique prefix of one, "
        + "or HOST:PORT ([IPV6]:PORT).")

/// Prints a list of hexes as it arrives: a line per hex, or a JSON object per line.
func listHexes(_ make: (ListPage) -> ControlRequest, _ invocation: Invocation, empty: String) async throws -> ExitCode {
    var last: HexSummary?
    let end = try await invocation.list(make) { response in
        guard let summary = response.summary else { return }
        last = summary
        let truncated = response.truncated == true
        printOutput(
            invocation.json
                ? json(Listed(summary, truncated: truncated)) : Output.hexLine(summary, truncated: truncated))
    }
    if end.count == 0 && !invocation.json { printOutput(empty) }
    noteMore(end, last: last?.id.uuidString, invocation)
    return .success
}

/// Says on standard error, for a person, how to get the next page.
func noteMore(_ end: ListEnd, last: String?, _ invocation: Invocation) {
    guard end.more, let last, !invocation.json else { return }
    printError("(more after \(last): hexctl \(invocation.command.name) --after \(last))")
}

/// Runs a command about one hex (`make` builds its request from the id argument) and shows the hex.
func showHex(_ make: (String) -> ControlRequest, _ invocation: Invocation) async throws -> ExitCode {
    return printResult(try await invocation.result(\.hex, of: make(try single(invocation, "a hex id"))), invocation) {
        Output.hexDetail($0)
    }
}

/// The one positional argument a command takes.
func single(_ invocation: Invocation, _ what: String) throws -> String {
    guard invocation.arguments.positionals.count == 1, let value = invocation.arguments.positionals.first else {
        throw UsageError("give \(what)")
    }
    return value
}

/// Prints `value` as JSON, or as text made by `text`.
@discardableResult
func printResult<T: Encodable>(_ value: T, _ invocation: Invocation, text: (T) -> String) -> ExitCode {
    if invocation.json {
        printOutput(json(value))
    } else {
        printOutput(text(value))
    }
    return .success
}

func watch(_ invocation: Invocation) async throws -> ExitCode {
    var since: UInt64 = 0
    if let text = invocation.arguments.value(.since) {
        guard let value = UInt64(text) else { throw UsageError("--since needs a sequence number, not '\(text)'") }
        since = value
    }
    var until: DaemonEvent.Kind?
    if let text = invocation.arguments.value(.until) {
        guard let kind = DaemonEvent.Kind(rawValue: text) else {
            throw UsageError("--until needs an event kind (see 'hexctl watch --help'), not '\(text)'")
        }
        until = kind
    }
    let timeout = try invocation.seconds(.timeout)
    if timeout != nil && until == nil {
        throw UsageError("--timeout needs --until: a plain watch runs until interrupted")
    }
    let deadline = timeout.map { ContinuousClock.now + .seconds($0) }
    let late = CommandFailure(.temporaryFailure, "no \(until?.rawValue ?? "") event in time")
    let client = try invocation.connect()
    // The first event is the first answer: with --timeout, waiting for it has the deadline too.
    var response: ControlResponse
    do {
        response = try await client.request(.watch(since: since), timeout: timeout.map { .seconds($0) })
    } catch let error as SocketError where error.isTimeout {
        throw late
    }
    while true {
        if let error = response.error { throw CommandFailure(error) }
        if let event = response.event {
            printResult(event, invocation) { Output.event($0) }
            if event.kind == until { return .success }
        }
        let left = deadline.map { $0 - ContinuousClock.now }
        if let left, left <= .zero { throw late }
        do {
            response = try await client.nextResponse(timeout: left)
        } catch let error as SocketError where error.isTimeout {
            throw late
        } catch {
            throw CommandFailure(.unavailable, "hexd stopped")
        }
    }
}

/// `hexctl wait`: polls until the daemon answers `status` (and lists `--peer`), or the timeout.
func waitUntilReady(_ invocation: Invocation) async throws -> ExitCode {
    let deadline = ContinuousClock.now + .seconds(try invocation.seconds(.timeout) ?? 30)
    let peer = invocation.arguments.value(.peer)
    while ContinuousClock.now < deadline {
        // Ready means every kind of device hexd is, LocalSend and KDE Connect too, is up.
        if let status = try? await invocation.result(\.status, of: .status, timeout: .seconds(5)),
            status.starting?.isEmpty ?? true
        {
            guard let peer else {
                return printResult(status, invocation) { "hexd is ready: \(json($0.name)) (\($0.peerUUID))" }
            }
            var found: PeerInfo?
            _ = try? await invocation.list(ControlRequest.peers) { response in
                if let info = response.peer,
                    info.name.lowercased() == peer.lowercased() || info.uuid.hasPrefix(peer.uppercased())
                {
                    found = info
                }
            }
            if let found { return printResult(found, invocation) { "\(json($0.name)) is listed at \($0.endpoint)" } }
        }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw CommandFailure(
        .temporaryFailure, peer.map { "\($0) was not listed in time" } ?? "hexd did not answer in time")
}
