import HexCommandLine
import HexControl
import HexKit

/// The commands about peers' keys: pairing, and undoing trust.
let trustCommands = [
    Command("pair", "<peer>", arguments: [("peer", "A peer's name, or its UUID or a unique prefix of one, from 'hexctl peers'.")],
            summary: "Pair with a peer: both sides show a verification code; the peer's user checks it and runs 'pair --accept'.",
            details: """
                Without --accept, asks the peer to pair and prints the code. On the peer, 'hexctl peers' and
                'hexctl watch' (event pairRequested) show the same code; when it matches, its user runs
                'hexctl pair --accept <this daemon>' there, within five minutes, and both sides then hold
                each other's key as paired. A code that differs means another host is in the middle: do not
                accept. Paired peers get through 'hexd --accept paired'.
                """,
            options: [
                Option("accept", help: "Accept the pairing request this peer sent, its code checked."),
                Option("timeout", value: "seconds", help: "How long to wait for the peer. Default: 5."),
            ]) { invocation in
        let peer = try single(invocation, "a peer")
        let timeout = try invocation.seconds("timeout").map { Duration.seconds($0) }
        let request = ControlRequest.pair(peer: peer, accept: invocation.arguments.flag("accept"), timeout: timeout)
        let report = try await invocation.result(\.trust, of: request, timeout: (timeout ?? SendOptions.defaultTimeout) + .seconds(10))
        return printResult(report, invocation) { Output.trust($0) }
    },
    Command("unpair", "<peer>",
            arguments: [("peer", "A peer's name, or its UUID or a unique prefix of one, in the table or seen before.")],
            summary: "Unpair a peer: its key stays pinned (it still speaks for the peer), but it is no longer paired.",
            details: "Only this side changes; the peer still holds this daemon as paired until its user unpairs too.") { invocation in
        let report = try await invocation.result(\.trust, of: .unpair(peer: try single(invocation, "a peer")))
        return printResult(report, invocation) { Output.trust($0) }
    },
    Command("trust", "<peer>",
            arguments: [("peer", "A peer's name or UUID prefix (from 'hexctl peers' or seen before), or any UUID.")],
            summary: "With --reset: forget the key pinned to a peer that was reinstalled, so its new key is pinned.",
            details: """
                A peer that made a new key (reinstalled, or its data directory lost) is refused: its sends
                are rejected and sends to it fail, naming both keys. Once you know why it changed,
                'hexctl trust --reset <peer>' forgets the old key; the next key the peer proves over TLS is
                pinned on first use, and can then be paired.
                """,
            options: [Option("reset", help: "Forget the key pinned to the peer (required: it is the only action).")]) { invocation in
        guard invocation.arguments.flag("reset") else { throw UsageError("say what to do: hexctl trust --reset <peer>") }
        let report = try await invocation.result(\.trust, of: .resetTrust(peer: try single(invocation, "a peer")))
        return printResult(report, invocation) { Output.trust($0) }
    },
]
