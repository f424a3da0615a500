import Glibc
import HexCommandLine
import HexControl
import HexKit

/// Fetching the files peers shared, and keeping charge of those this daemon shares.
let fetchCommands = [
    Command(
        "fetch", "<hex> [<n> ...]",
        arguments: [
            ("hex", "A hex id from 'hexctl inbox', or a unique prefix of one."),
            (
                "n",
                "The numbers of the links to fetch (1 is the first; see hexctl inbox show). "
                    + "Default: every hexd:// link of the hex."
            ),
        ],
        summary: "Fetch the files a peer shared in a hex (its hexd:// links) into the downloads folder.",
        details: """
            The daemon fetches each file over TLS from the peer that shared it, which serves it only to
            this device's key. A file arrives as '<name>.<grant>.part' and takes its name only once its
            SHA-256 is the one its owner granted; a name taken gets ' (1)', ' (2)'... (nothing is
            overwritten), and names are made safe (no folders, no hidden files, no device names). A
            fetch that stops (the owner away, the disk at its floor, either daemon restarted) keeps
            its partial file for a day: fetch again to resume from the bytes it verifiably holds.
            Progress shows on a terminal; with --json each report (fetching, then fetched or failed)
            is a line. Exit 75 when a file could not be fetched for now (the owner away, no room),
            77 when its owner refused it (revoked, expired, changed).
            """,
        options: [
            Option(
                .downloads, value: "path",
                help: "Fetch into this folder instead of the daemon's (hexd --downloads).")
        ]
    ) { invocation in
        try await fetch(invocation)
    },
    Command(
        "grants",
        summary: "List the files this daemon shared with peers (hexctl share --to): "
            + "file, recipient, fetches, expiry."
    ) { invocation in
        let end = try await invocation.list({ _ in .grants }) { response in
            guard let grant = response.grant else { return }
            printOutput(invocation.json ? json(grant) : grantLine(grant))
        }
        if end.count == 0 && !invocation.json { printOutput("no files shared") }
        if end.more && !invocation.json { printError("(only the newest \(end.count) are listed)") }
        return .success
    },
    Command(
        "revoke", "<grant>",
        arguments: [("grant", "A grant id from 'hexctl grants', or a unique prefix of one.")],
        summary: "Revoke a file shared with a peer: its link no longer fetches anything."
    ) { invocation in
        let grant = try await invocation.result(\.grant, of: .revoke(id: try single(invocation, "a grant id")))
        return printResult(grant, invocation) { "revoked: " + grantLine($0) }
    },
]

private func fetch(_ invocation: Invocation) async throws -> ExitCode {
    let words = invocation.arguments.positionals
    guard let hex = words.first else { throw UsageError("give a hex id (see hexctl inbox)") }
    let numbers = try words.dropFirst().map { word throws(UsageError) in
        guard let number = Int(word), number >= 1 else {
            throw UsageError("'\(word)' is not a link number (1 is the first)")
        }
        return number
    }
    let downloads = invocation.arguments.value(.downloads).map {
        $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0
    }
    let showProgress = isatty(STDERR_FILENO) == 1 && !invocation.json
    let request = ControlRequest.fetch(FetchRequest(hex: hex, numbers: numbers, downloads: downloads))
    do {
        // A large file takes as long as it takes: the daemon's deadlines bound each fetch, and
        // it reports progress at least every few seconds while bytes flow.
        _ = try await invocation.connect().list(request, timeout: .seconds(600)) { response in
            guard let report = response.fetch else { return }
            if invocation.json {
                printOutput(json(report))
            } else if report.state == .fetching {
                if showProgress { printErrorRaw("\r\u{1B}[K" + progressLine(report)) }
            } else {
                if showProgress { printErrorRaw("\r\u{1B}[K") }
                printOutput(resultLine(report))
            }
        }
    } catch let error as ControlError {
        throw CommandFailure(error)
    }
    return .success
}

private func progressLine(_ report: FetchReport) -> String {
    guard let size = report.size, size > 0 else { return "fetching \(json(report.name))" }
    let percent = Int(report.received * 100 / size)
    return "fetching \(json(report.name)): \(percent)% (\(ByteCount.text(Int(clamping: report.received))) of "
        + "\(ByteCount.text(Int(clamping: size))))"
}

private func resultLine(_ report: FetchReport) -> String {
    switch report.state {
    case .fetched:
        let resumed = report.resumedFrom.map { ", resumed after \(ByteCount.text(Int(clamping: $0)))" } ?? ""
        return "fetched link \(report.link): \(json(report.path ?? report.name)) "
            + "(\(ByteCount.text(Int(clamping: report.size ?? report.received)))\(resumed))"
    case .failed, .fetching:
        let kept = report.path.map { " (partial file kept: \(json($0)))" } ?? ""
        return "not fetched link \(report.link): \(json(report.name)): \(report.message ?? "failed")\(kept)"
    }
}

private func grantLine(_ grant: FileGrant) -> String {
    let state =
        if grant.revoked != nil { "revoked" } else if grant.expires < Date() { "expired" } else {
            "until \(grant.expires.formatted(.iso8601))"
        }
    let fetched = grant.fetches == 1 ? "fetched once" : "fetched \(grant.fetches) times"
    return "\(grant.id.prefix(8))  \(json(grant.path))  "
        + "to \(json(grant.recipientName)) \(Output.shortID(grant.recipientID))  "
        + "\(ByteCount.text(Int(clamping: grant.size)))  \(fetched)  \(state)"
}
