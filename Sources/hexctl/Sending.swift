import HexCommandLine
import HexControl
import HexKit

/// The options every sending command shares; `timeout` names the option for the peer's answer
/// (`share` uses `--timeout` for gathering links).
func sendOptions(timeout: OptionKey = .timeout) -> [Option] {
    [
        Option(
            timeout, value: "seconds",
            help: "How long to wait for the peer's acknowledgement, plus 2 s per MiB sent. "
                + "Default: 5. Past it, the send stays queued."),
        Option(.noWait, help: "Return once the send is queued; hexd delivers it in the background."),
        Option(
            .noQueue,
            help: "Do not queue the send: try once and forget it (with --no-wait, return once it is written)."),
        Option(
            .messageID, value: "uuid",
            help: "The send's message id (default: a new one). Sending again with the same id never delivers twice."),
        Option(.legacy, help: "Send only what the original app understood, whatever the peer announced."),
    ]
}

/// The send options given, read; `to` is the peer. The message id is chosen here unless given,
/// so that hexctl can name the send even if the daemon stops before answering.
func sendOptions(_ invocation: Invocation, to peer: String, timeout: OptionKey = .timeout) throws -> SendOptions {
    var messageID = UUID()
    if let text = invocation.arguments.value(.messageID) {
        guard let given = UUID(uuidString: text) else { throw UsageError("--message-id needs a UUID, not '\(text)'") }
        messageID = given
    }
    return SendOptions(
        to: peer, wait: !invocation.arguments.flag(.noWait),
        timeout: try invocation.seconds(timeout).map { .seconds($0) },
        legacy: invocation.arguments.flag(.legacy), queue: !invocation.arguments.flag(.noQueue), messageID: messageID
    )
}

/// The send options of a command that takes `--to`.
func sendOptions(_ invocation: Invocation) throws -> SendOptions {
    guard let peer = invocation.arguments.value(.to) else { throw UsageError("--to <peer> is required") }
    return try sendOptions(invocation, to: peer)
}

/// Sends `request` and prints its report: the peer's Ack, or with `--no-wait` the queued send.
func send(_ request: ControlRequest, _ options: SendOptions, _ invocation: Invocation) async throws -> ExitCode {
    // The daemon waits longer for the Ack of a large hex; so does hexctl for the daemon.
    let allowance = EnvelopeLimits.ackAllowance(forBytes: (try? ControlCoding.encode(request).count) ?? 0)
    let wait = (options.timeout ?? SendOptions.defaultTimeout) + allowance + .seconds(10)
    let response = try await exchange(request, options, invocation, within: wait)
    if let queued = response.queued { return printResult(queued, invocation) { Output.queued($0) } }
    guard let report = response.send else {
        throw CommandFailure(.failure, "the daemon's answer to \(request.command.rawValue) lacks its result")
    }
    return printResult(report, invocation) { Output.send($0) }
}

/// Runs a send request to its last answer. A queued send answers twice: queued, then the outcome
/// of its first attempt (unless `--no-wait`); the first answer is how hexctl knows, should the
/// daemon stop, whether the send was already queued.
/// - Throws: `CommandFailure`: the daemon's error (75 for a send left queued), or the daemon
///   stopping, saying whether the send was queued.
func exchange(_ request: ControlRequest, _ options: SendOptions, _ invocation: Invocation, within timeout: Duration)
    async throws -> ControlResponse
{
    let client = try invocation.connect()
    let id = options.messageID?.uuidString ?? "?"
    var response: ControlResponse
    do {
        response = try await client.request(request, timeout: timeout)
    } catch {
        throw CommandFailure(
            .unavailable,
            "hexd stopped answering before it confirmed that \(id) was queued (\(error)). If it was, hexd delivers it "
                + "when it runs again (hexctl outbox lists it); "
                + "sending again with --message-id \(id) cannot deliver it twice"
        )
    }
    guard let queued = response.queued, options.wait else {
        if let error = response.error { throw CommandFailure(error) }
        return response
    }
    do {
        response = try await client.nextResponse(timeout: timeout)
    } catch {
        throw CommandFailure(
            .temporaryFailure,
            "hexd stopped answering after it queued \(queued.messageID) for \(queued.peer) (\(error)): "
                + "it delivers it once it runs again; hexctl outbox lists it")
    }
    if let error = response.error { throw CommandFailure(error) }
    return response
}
