import HexCommandLine
import HexControl
import HexKit

/// The commands about the Alerts peers sent, which hexd keeps.
let alertCommands = [
    Command(
        "alerts", summary: "List the alerts peers sent, newest first: when, from which ID or address, the message.",
        options: listOptions(cursor: "id", naming: "alert id")
    ) { invocation in
        try await listItems(
            ControlRequest.alertsList, \.alert, invocation, empty: "no alerts",
            cursor: \.id.uppercaseText, line: Output.alertLine)
    },
    Command(
        "alerts delete", "<id>",
        arguments: [("id", "An alert id from 'hexctl alerts', or a unique prefix of one.")],
        summary: "Delete a kept alert (what it held goes back to its sender's share of the inbox)."
    ) { invocation in
        let alert = try await invocation.result(\.alert, of: .alertsDelete(id: try single(invocation, "an alert id")))
        return printResult(alert, invocation) { "deleted alert \($0.id.uppercaseText)" }
    },
]
