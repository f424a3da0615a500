import HexCommandLine
import HexControl
import HexKit

/// The commands about peers' keys: pairing, and undoing trust.
let trustCommands = [
    Command(
        "pair", "<peer>",
        arguments: [("peer", "A peer's name, or its UUID or a unique prefix of one, from 'hexctl peers'.")],
        summary:
            "Pair with a peer: both sides show a verification code; "
            + "the peer's user checks it and runs 'pair --accept'.",
        details: """
            Without --accept, asks the peer to pair and prints the code. On the peer, 'hexctl peers' and
            'hexctl watch' (event pairRequested) show the same code; when it matches, its user runs
            'hexctl pair --accept <this daemon>' there, within five minutes, and both sides then hold
            each other's key as paired. A code that differs means another host is in the middle: do not
            accept. Paired peers get through 'hexd --accept paired'.

            A LocalSend device has no code: when its offer waits for your yes ('hexctl peers' says what it
            wants to send), 'pair --accept <its name>' lets it in and pairs it; 'pair --decline' refuses it.

            A Quick Share device (an Android phone's share sheet) has nothing to pair: when it offers files,
            'hexctl peers' shows the offer with the PIN its screen shows too; 'pair --accept <its name>' takes
            the files, 'pair --decline' refuses them.

            A KDE Connect device pairs as the KDE Connect apps do: 'hexctl pair <its name>' asks it (accept
            on the device, which shows the same code), and a request from it shows in 'hexctl peers' with
            its code, accepted with 'pair --accept' or refused with 'pair --decline' within 30 s.
            """,
        options: [
            Option(.accept, help: "Accept the pairing request this peer sent, its code checked."),
            Option(.decline, help: "Decline the pairing request this peer sent (nothing is pinned or sent)."),
            Option(.timeout, value: "seconds", help: "How long to wait for the peer. Default: 5."),
        ]
    ) { invocation in
        let peer = try single(invocation, "a peer")
        let timeout = try invocation.seconds(.timeout).map { Duration.seconds($0) }
        let (accept, decline) = (invocation.arguments.flag(.accept), invocation.arguments.flag(.decline))
        guard !(accept && decline) else { throw UsageError("--accept and --decline exclude each other") }
        let request =
            decline
            ? ControlRequest.declinePairing(peer: peer)
            : ControlRequest.pair(peer: peer, accept: accept, timeout: timeout)
        let report = try await invocation.result(
            \.trust, of: request, timeout: (timeout ?? SendOptions.defaultTimeout) + .seconds(10))
        return printResult(report, invocation) { Output.trust($0) }
    },
    Command(
        "unpair", "<peer>",
        arguments: [("peer", "A peer's name, or its UUID or a unique prefix of one, in the table or seen before.")],
        summary: "Unpair a peer: its key stays pinned (it still speaks for the peer), but it is no longer paired.",
        details: """
            Only this side changes; the peer still holds this daemon as paired until its user unpairs too.
            A KDE Connect device is unpaired on both sides (told so when linked), and its certificate is
            forgotten.
            """
    ) { invocation in
        let report = try await invocation.result(\.trust, of: .unpair(peer: try single(invocation, "a peer")))
        return printResult(report, invocation) { Output.trust($0) }
    },
    Command(
        "trust", "<peer>",
        arguments: [("peer", "A peer's name or UUID prefix (from 'hexctl peers' or seen before), or any UUID.")],
        summary: "With --reset: forget the key pinned to a peer (a reinstalled one goes by a new ID).",
        details: """
            A peer's ID derives from its key, so a peer that made a new key (reinstalled, or its data
            directory lost) is a new device with a new ID: 'hexctl peers' warns that it goes by the name
            of a peer whose key is pinned, and a send to the old ID names the new one. Once you know why
            it changed, 'hexctl trust --reset <old ID>' forgets the old key and the warning goes. For a
            peer pinned before IDs came from keys, whose beacons now announce another key, it makes the
            next key the peer proves over TLS pinned on first use.
            """,
        options: [Option(.reset, help: "Forget the key pinned to the peer (required: it is the only action).")]
    ) { invocation in
        guard invocation.arguments.flag(.reset) else {
            throw UsageError("say what to do: hexctl trust --reset <peer>")
        }
        let report = try await invocation.result(\.trust, of: .resetTrust(peer: try single(invocation, "a peer")))
        return printResult(report, invocation) { Output.trust($0) }
    },
]
