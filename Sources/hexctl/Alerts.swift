import HexCommandLine
import HexControl
import HexKit

/// The commands about the Alerts peers sent, which hexd keeps.
let alertCommands = [
    Command("alerts", summary: "List the alerts peers sent, newest first: when, from which ID or address, the message.",
            options: listOptions(cursor: "id", naming: "alert id")) { invocation in
        var last: ReceivedAlert?
        let end = try await invocation.list(ControlRequest.alertsList) { response in
            guard let alert = response.alert else { return }
            last = alert
            printOutput(invocation.json ? json(alert) : Output.alertLine(alert))
        }
        if end.count == 0 && !invocation.json { printOutput("no alerts") }
        noteMore(end, last: last?.id.uppercaseText, invocation)
        return .success
    },
    Command("alerts delete", "<id>", arguments: [("id", "An alert id from 'hexctl alerts', or a unique prefix of one.")],
            summary: "Delete a kept alert (what it held goes back to its sender's share of the inbox).") { invocation in
        let alert = try await invocation.result(\.alert, of: .alertsDelete(id: try single(invocation, "an alert id")))
        return printResult(alert, invocation) { "deleted alert \($0.id.uppercaseText)" }
    },
]
