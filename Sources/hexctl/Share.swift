import Glibc
import HexCommandLine
import HexControl
import HexKit

let shareCommands = [
    Command(
        "share", "<file> ...",
        arguments: [("file", "A file to share (a relative path is taken from here), or with --provider url a URL.")],
        summary: "Turn files into a hex of share links, one per file, and send it to a peer or save it.",
        details: """
            Each file goes through a link provider in the daemon: 'peer' (the file stays where it is,
            hashed and granted to the one peer the hex goes to, which fetches it with 'hexctl fetch';
            see 'hexctl grants' and 'hexctl revoke'), 'file' (a file:// link; the file must exist),
            'url' (the arguments are URLs already), or 'command' (the daemon's --link-command, for
            example a cloud tool that prints a public link). The default is 'peer' with --to a current
            peer; to a legacy peer, 'command' when the daemon has one (else name a provider); with
            --save, 'command' when the daemon has one, else 'file'. Links are gathered concurrently and
            kept in the order given; if any file fails, nothing is sent or saved and the error names the
            file. On a terminal, progress is shown when it takes more than a moment (never with --json).

            To a LocalSend device (--to its alias or localsend: ID), the files themselves go, at once and
            not through the outbox, with their types and SHA-256: the device's person may take up to five
            minutes to accept them, then each is uploaded as it is read (progress on a terminal; 'hexctl
            watch' shows filesSending), again if the device got other bytes, and no further once its
            person cancels (exit 77). To a
            paired KDE Connect device (--to its name or kdeconnect: ID), likewise: each file is offered in
            turn and the device fetches it at once. To a Quick Share receiver (--to its name or quickshare:
            ID), likewise: the files are offered together, its person accepts them within a minute (both
            screens show the same PIN), and they are sent in chunks on the same connection.

            With --to a hexd peer, the hex is sent as 'hexctl send' sends: \(queueingHelp)
            """,
        options: [
            Option(.provider, value: "name", help: "peer, file, url or command."),
            Option(
                .to, value: "peer",
                help: "Send the hex to this peer (name, UUID prefix, HOST:PORT or [IPV6]:PORT)."),
            Option(.save, help: "Save the hex to My Hexlist instead."),
            Option(.description, value: "text", short: "d", help: "The hex's description."),
            Option(.color, value: "#RRGGBB", help: "The hex's colour. Default: #AAAAAA."),
            Option(.timeout, value: "seconds", help: "How long gathering the links may take. Default: 120."),
        ] + sendOptions(timeout: .sendTimeout)
    ) { invocation in
        try await share(invocation)
    },
    Command("queries", summary: "List the share queries in flight, with their progress.") { invocation in
        printResult(try await invocation.result(\.queries, of: .queries), invocation) { queries in
            queries.isEmpty
                ? "no queries in flight"
                : queries.map {
                    "\($0.id.uuidString)  \($0.kind.rawValue)  \($0.answered)/\($0.total)  "
                        + "waiting: \($0.waiting.prefix(3).joined(separator: ", "))"
                }
                .joined(separator: "\n")
        }
    },
    Command(
        "cancel", "<query-id>",
        arguments: [("query-id", "A share query id from hexctl queries, or a unique prefix of one.")],
        summary: "Cancel a share query (its running link commands are stopped); the id may be a unique prefix."
    ) { invocation in
        _ = try await invocation.request(.cancel(query: try single(invocation, "a query id").uppercased()))
        return printResult(["cancelled": true], invocation) { _ in "cancelled" }
    },
]

private func share(_ invocation: Invocation) async throws -> ExitCode {
    let arguments = invocation.arguments
    // Relative paths are made absolute for the daemon, which runs elsewhere; URLs for the `url`
    // provider stay as they are, so a mistyped one is reported as given.
    let keepAsGiven = arguments.value(.provider) == "url"
    let files = arguments.positionals.map {
        keepAsGiven || $0.contains("://") || $0.hasPrefix("/")
            ? $0 : FileManager.default.currentDirectoryPath + "/" + $0
    }
    guard !files.isEmpty else { throw UsageError("give at least one file") }
    let save = arguments.flag(.save)
    guard save != (arguments.value(.to) != nil) else { throw UsageError("give either --to <peer> or --save") }
    let gatherTimeout =
        try invocation.seconds(.timeout).map { Duration.seconds($0) } ?? ShareRequest.defaultGatherTimeout
    let sending = try arguments.value(.to).map { peer in try sendOptions(invocation, to: peer, timeout: .sendTimeout)
    }
    let destination: ShareRequest.Destination = if let sending { .peer(sending) } else { .myHexlist }
    let query = UUID()
    let request = ControlRequest.share(
        ShareRequest(
            files: files, provider: arguments.value(.provider), query: query, gatherTimeout: gatherTimeout,
            description: arguments.value(.description) ?? "", color: arguments.value(.color) ?? HexColor.fallback,
            destination: destination))
    let progress =
        isatty(STDERR_FILENO) == 1 && !invocation.json ? Task { await showProgress(of: query, invocation) } : nil
    let within = gatherTimeout + (sending?.timeout ?? SendOptions.defaultTimeout) + .seconds(30)
    let response: ControlResponse
    do {
        response =
            if let sending {
                try await exchange(request, sending, invocation, within: within)
            } else {
                try await invocation.request(request, timeout: within)
            }
        progress?.cancel()
    } catch {
        progress?.cancel()
        throw error
    }
    if progress != nil { printErrorRaw("\r\u{1B}[K") }
    if let hex = response.hex {
        return printResult(hex, invocation) { "saved to My Hexlist:\n" + Output.hexDetail($0) }
    }
    if let queued = response.queued { return printResult(queued, invocation) { Output.queued($0) } }
    guard let report = response.send else {
        throw CommandFailure(.failure, "the daemon's answer to share lacks its result")
    }
    return printResult(report, invocation) { Output.send($0) }
}

/// After half a second, shows "links n/m" for this query on standard error until cancelled.
private func showProgress(of query: UUID, _ invocation: Invocation) async {
    guard (try? await Task.sleep(for: .milliseconds(500))) != nil,
        let client = try? invocation.connect(),
        var response = try? await client.request(.watch(since: UInt64.max), timeout: nil)
    else { return }
    while !Task.isCancelled {
        if let event = response.event, event.id == query.uuidString, let message = event.message {
            switch event.kind {
            case .queryProgress: printErrorRaw("\r\u{1B}[Kgathering links: \(message)")
            case .filesSending: printErrorRaw("\r\u{1B}[Ksending \(message)")
            default: break
            }
        }
        guard let next = try? await client.nextResponse(timeout: nil) else { return }
        response = next
    }
}
