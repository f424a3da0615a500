import HexCarrier
import HexCommandLine
import HexKit

/// What one desktop notification says and offers, made from what arrived (pure: no bus, no
/// clock). Everything a peer sent is cleaned first: no control or bidirectional-override
/// characters, bounded lengths, and markup escaped when the server reads markup.
struct NotificationContent: Equatable {
    var summary: String
    var body: String
    /// Action keys and labels, in the order shown.
    var actions: [(key: String, label: String)]
    /// What "open" opens: a link of the hex, or the page.
    var openTargets: [String]

    static func == (left: NotificationContent, right: NotificationContent) -> Bool {
        left.summary == right.summary && left.body == right.body && left.openTargets == right.openTargets
            && left.actions.map(\.key) == right.actions.map(\.key)
            && left.actions.map(\.label) == right.actions.map(\.label)
    }

    /// The hexes one sender sent within the fold window, oldest first (at least one).
    /// - Parameters:
    ///   - page: the page's URL with its token, when hexd serves it.
    ///   - markup: whether the server reads the body as markup (its `body-markup` capability).
    static func hexes(_ hexes: [Hex], page: String?, markup: Bool) -> NotificationContent {
        let newest = hexes.last
        let sender = senderLabel(
            name: newest?.senderName ?? "", id: newest?.senderUUID ?? "",
            trust: newest?.senderTrust)
        var lines: [String]
        let summary: String
        if hexes.count == 1, let hex = newest {
            summary = sender + " sent a hex"
            let links = hex.links.prefix(3).map { clean($0.url) }
            lines = [clean(hex.hexDescription, or: "(no description)")] + links
            if hex.links.count > 3 { lines.append("and \(hex.links.count - 3) more links") }
        } else {
            summary = sender + " sent \(hexes.count) hexes"
            lines = hexes.suffix(5).map { "• " + clean($0.hexDescription, or: "(no description)") }
            if hexes.count > 5 { lines.insert("… and \(hexes.count - 5) before", at: 0) }
        }
        // One openable link opens itself; several, or several hexes, open the page.
        let openable = hexes.flatMap(\.links).map(\.url).filter(Browser.mayOpen)
        let targets =
            hexes.count == 1 && openable.count == 1
            ? openable
            : page.map { [$0 + "#inbox"] } ?? Array(openable.prefix(5))
        return NotificationContent(
            summary: summary, body: body(lines, markup: markup),
            actions: actions(open: !targets.isEmpty, page: page), openTargets: targets)
    }

    static func pairing(name: String, id: String, code: String, page: String?, markup: Bool) -> NotificationContent {
        let sender = senderLabel(name: name, id: id, trust: nil)
        // A device of another protocol goes by its kind and ID: its kind and 8 characters name it.
        let short = id.shortPeerID ?? String(id.prefix(8))
        let lines = [
            "Verification code \(clean(code)).",
            "Accept only if their screen shows the same: on the inbox page, or with "
                + "hexctl pair --accept \(short).",
        ]
        return NotificationContent(
            summary: sender + " asks to pair", body: body(lines, markup: markup),
            actions: page == nil ? [] : [("open", "Open")],
            openTargets: page.map { [$0 + "#peers"] } ?? [])
    }

    static func offer(name: String, id: String, offer: WaitingOffer, page: String?, markup: Bool)
        -> NotificationContent
    {
        let sender = senderLabel(name: name, id: id, trust: nil)
        let lines = [
            "Wants to send \(clean(offer.what)) by \(offer.via). "
                + (offer.check.map { "Check that \($0). " } ?? "")
                + "It waits a minute for your yes" + (offer.acceptingPairs ? ", which lets it send from now on" : "")
                + ": on the inbox page, or with hexctl pair --accept \(id.shortPeerID ?? id)."
        ]
        return NotificationContent(
            summary: sender + " wants to send", body: body(lines, markup: markup),
            actions: page == nil ? [] : [("open", "Open")],
            openTargets: page.map { [$0 + "#peers"] } ?? [])
    }

    static func alert(from sender: String, message: String, page: String?, markup: Bool) -> NotificationContent {
        NotificationContent(
            summary: "Alert from " + clean(sender, or: "a peer"),
            body: body([clean(message)], markup: markup),
            actions: page == nil ? [] : [("open", "Open")],
            openTargets: page.map { [$0 + "#alerts"] } ?? [])
    }

    private static func actions(open: Bool, page: String?) -> [(key: String, label: String)] {
        (open ? [("open", "Open")] : []) + (page == nil ? [] : [("inbox", "Inbox")])
    }

    private static func senderLabel(name: String, id: String, trust: SenderTrust?) -> String {
        let short = String(clean(id).prefix(8)).uppercased()
        let trustText =
            switch trust {
            case .paired: ", paired"
            case .pinned: ", pinned"
            case .new: ", new key"
            case .plaintext: ", plaintext"
            case nil: ""
            }
        return clean(name, or: "(no name)") + " (" + short + trustText + ")"
    }

    private static func body(_ lines: [String], markup: Bool) -> String {
        let text = lines.joined(separator: "\n")
        guard markup else { return text }
        return text.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;")
    }

    /// One line of at most 200 characters, without control characters or the characters that
    /// reorder text (a name cannot make itself read backwards).
    static func clean(_ text: String, or empty: String = "") -> String {
        let scalars = text.unicodeScalars.filter { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0x200E || scalar.value == 0x200F)
        }
        var cleaned = String(String.UnicodeScalarView(scalars))
        if cleaned.count > 200 { cleaned = String(cleaned.prefix(199)) + "…" }
        return cleaned.isEmpty ? empty : cleaned
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
