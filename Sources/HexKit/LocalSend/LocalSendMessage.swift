/// A LocalSend message as hexd keeps it: a hex whose description is the message's text and whose
/// links are the web addresses in it, in order, each once.
public enum LocalSendMessage {
    /// The colour of hexes that came from LocalSend devices.
    public static let color = "#0EA5A4"
    /// The most links one message becomes.
    public static let maximumLinks = 64
    /// The longest address taken as a link; a longer one stays text.
    public static let maximumURLBytes = 8_192

    /// The hex `text` becomes, sent by `alias`.
    /// - Parameter senderID: the device's ID when its certificate proved it (`PeerKind.localSendID`);
    ///   nil when it showed none (an app before 1.18), and the hex then names no sender ID.
    public static func hex(_ text: String, from alias: String, senderID: String?) -> HexJM {
        HexJM(
            senderUUID: senderID, senderName: alias, hexDescription: text, hexColor: color,
            links: links(in: text).map { LinkJM(url: $0, linkDescription: LinkURL.parse($0).map(LinkURL.description)) })
    }

    /// The `http` and `https` addresses in `text`, in order, each once: words of it (between
    /// spaces and line ends) without the brackets, quotes and punctuation that surround an
    /// address in prose.
    public static func links(in text: String) -> [String] {
        var links: [String] = []
        var seen = Set<String>()
        for word in text.split(whereSeparator: \.isWhitespace) {
            guard links.count < maximumLinks else { break }
            let trimmed = word.drop { "<([{\"'".contains($0) }.reversed().drop { ">)]}\"'.,;:!?".contains($0) }
            let candidate = String(String(trimmed.reversed()))
            let lowered = candidate.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"),
                candidate.utf8.count <= maximumURLBytes,
                LinkURL.parse(candidate) != nil, seen.insert(candidate).inserted
            else { continue }
            links.append(candidate)
        }
        return links
    }
}

extension LocalSendMessage {
    /// The message `hex` is sent to a LocalSend device as: a lone link with no description as the
    /// bare address (LocalSend then offers to open it); otherwise the description, then each
    /// link's address on a line of its own. A description is never dropped to get the bare form.
    /// Nil for a hex with neither a description nor a link: there is nothing to show.
    public static func text(of hex: HexJM) -> String? {
        let urls = (hex.links ?? []).compactMap(\.url).filter { !$0.isEmpty }
        let description = (hex.hexDescription ?? "").trimmed
        if description.isEmpty, urls.count == 1, let url = urls.first { return url }
        let lines = (description.isEmpty ? [] : [description]) + urls
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }
}

extension LocalSendMessage {
    /// The service of the links to files a LocalSend device sent, saved on this machine.
    public static let fileService: Service = "File"
    /// The most names a files hex's description lists.
    public static let namesDescribed = 5

    /// The hex the files `saved` (their names, and their paths in the downloads folder) become,
    /// sent by `alias`: a link to each saved file, described by its name, and the names as the
    /// description.
    public static func hex(files saved: [(name: String, path: String)], from alias: String, senderID: String?) -> HexJM
    {
        let names = saved.prefix(namesDescribed).map(\.name).joined(separator: ", ")
        let more = saved.count > namesDescribed ? " and \(saved.count - namesDescribed) more" : ""
        let description = saved.count == 1 ? names : "\(saved.count) files: \(names)\(more)"
        return HexJM(
            senderUUID: senderID, senderName: alias, hexDescription: description, hexColor: color,
            links: saved.map {
                LinkJM(url: LinkURL.file(path: $0.path), linkDescription: $0.name, service: fileService)
            })
    }
}
