import HexCommandLine
import HexControl
import HexKit

/// Hiding this daemon from the network, and showing it again.
let visibilityCommands = [
    Command(
        "visibility", "[visible|hidden|for <duration>]",
        arguments: [
            (
                "visible|hidden|for <duration>",
                """
                visible, hidden, or 'for' and a duration (90, 30s, 10m, 2h; at most 1d): visible that long, then \
                hidden again. Without one, shows the visibility.
                """
            )
        ],
        summary: "Show or change whether this daemon announces itself on the network.",
        details: """
            Hidden, hexd sends no beacons and answers no queries, and says 'bye' as it hides, so that
            peers drop it at once; it still hears others and can send to them, and a peer that knows
            its address still reaches it (hexctl send --to HOST:PORT). 'for' makes it visible for a while,
            for someone to find it, and hidden again by itself. The visibility outlives a restart;
            'hexctl status' shows it.
            """
    ) { invocation in
        let change = try visibilityChange(invocation.arguments.positionals)
        let report = try await invocation.result(\.visibility, of: .visibility(change))
        return printResult(report, invocation) { $0.text }
    }
]

/// The change the words after `visibility` ask for; nil for none.
private func visibilityChange(_ words: [String]) throws -> VisibilityChange? {
    switch words {
    case []: return nil
    case ["visible"]: return .visible
    case ["hidden"]: return .hidden
    case let words where words.count == 2 && words[0] == "for":
        guard let seconds = DurationText.seconds(words[1]), seconds <= VisibilityChange.longest.inSeconds else {
            throw UsageError("'\(words[1])' is not a duration up to a day: say 90, 30s, 10m or 2h")
        }
        return .visibleFor(.seconds(seconds))
    default:
        throw UsageError("say visible, hidden or for <duration> (hexctl visibility for 10m)")
    }
}
