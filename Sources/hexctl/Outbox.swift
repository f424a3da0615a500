import HexCommandLine
import HexControl
import HexKit

/// How a send goes through the outbox, for the help of every sending command.
let queueingHelp = """
    The send is first queued in hexd's outbox, then hexctl waits for the peer's acknowledgement (exit 0).
    If it does not come within --timeout (the peer is away, or did not answer), hexctl exits 75 and the send
    stays queued: hexd tries again with growing waits, at once when the peer's beacon is heard, and after a
    restart, with the same message id, so the peer stores it once; it gives up after hexd's --outbox-ttl
    (7 days by default). 'hexctl outbox' lists what waits; 'hexctl watch' shows sendRetrying, sendAcked
    and sendFailed.
    """

/// The commands about sends waiting in the outbox.
let outboxCommands = [
    Command(
        "outbox", summary: "List the sends waiting to be delivered: destination, attempts, next try, last error.",
        options: listOptions(cursor: "message-id", naming: "message id")
    ) { invocation in
        try await listItems(
            ControlRequest.outboxList, \.outbox, invocation, empty: "the outbox is empty",
            cursor: \.messageID, line: Output.outboxLine)
    },
    Command(
        "outbox retry", "<id>", arguments: [("id", "A message id from 'hexctl outbox', or a unique prefix of one.")],
        summary: "Try a queued send now and wait for the peer's acknowledgement, as send does.",
        options: [
            Option(.timeout, value: "seconds", help: "How long to wait for the peer's acknowledgement. Default: 5.")
        ]
    ) { invocation in
        let timeout = try invocation.seconds(.timeout).map { Duration.seconds($0) }
        let request = ControlRequest.outboxRetry(id: try single(invocation, "a message id"), timeout: timeout)
        let report = try await invocation.result(
            \.send, of: request, timeout: (timeout ?? SendOptions.defaultTimeout) + .seconds(10))
        return printResult(report, invocation) { Output.send($0) }
    },
    Command(
        "outbox cancel", "<id>", arguments: [("id", "A message id from 'hexctl outbox', or a unique prefix of one.")],
        summary: "Remove a send from the outbox: it is not tried again (an attempt under way may still deliver it)."
    ) { invocation in
        let item = try await invocation.result(\.outbox, of: .outboxCancel(id: try single(invocation, "a message id")))
        return printResult(item, invocation) { "cancelled \($0.kind) \($0.messageID) for \(json($0.peer))" }
    },
]
