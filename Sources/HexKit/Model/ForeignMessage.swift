/// A message from a device of another protocol (a LocalSend message, a KDE Connect share) as
/// hexd keeps it: a hex whose description is the message's text and whose links are the web
/// addresses in it, in order, each once, in the colour of the protocol; and a hex as such a
/// message.
public struct ForeignMessage: Sendable {
    /// The colour of hexes that came from the protocol's devices.
    public let color: String

    /// The messages of a protocol whose hexes have `color` (each protocol declares its own in its folder).
    public init(color: String) {
        self.color = color
    }

    /// The most links one message becomes.
    public static let maximumLinks = 64
    /// The longest address taken as a link; a longer one stays text.
    public static let maximumURLBytes = 8_192

    /// The hex `text` becomes, sent by `alias`.
    /// - Parameter senderID: the device's ID when its certificate proved it (a `PeerIDForm` a key proves);
    ///   nil when it showed none (an app before 1.18), and the hex then names no sender ID.
    public func hex(_ text: String, from alias: String, senderID: String?) -> HexJM {
        HexJM(
            senderUUID: senderID, senderName: alias, hexDescription: text, hexColor: color,
            links: Self.links(in: text).map {
                LinkJM(url: $0, linkDescription: LinkURL.parse($0).map(LinkURL.description))
            })
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

extension ForeignMessage {
    /// The text `hex` is sent to a LocalSend or KDE Connect device as: a lone link with no
    /// description as the bare address (the device then offers to open it, or opens it);
    /// otherwise the description, then each link's address on a line of its own. A description is
    /// never dropped to get the bare form. Nil for a hex with neither a description nor a link:
    /// there is nothing to show.
    public static func text(of hex: HexJM) -> String? {
        let urls = (hex.links ?? []).compactMap(\.url).filter { !$0.isEmpty }
        let description = (hex.hexDescription ?? "").trimmed
        if description.isEmpty, urls.count == 1, let url = urls.first { return url }
        let lines = (description.isEmpty ? [] : [description]) + urls
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }
}

extension ForeignMessage {
    /// The service of the links to files a device of another protocol sent, saved on this machine.
    public static let fileService: Service = "File"
    /// The most names a files hex's description lists.
    public static let namesDescribed = 5

    /// The longest first line of a text file that describes a hex; a longer one is clipped.
    public static let maximumDescribingLineBytes = 300

    /// The hex the files `saved` (their names, and their paths in the downloads folder) become,
    /// sent by `alias`: a link to each saved file, described by its name, and the names as the
    /// description.
    /// - Parameter text: the text of a lone text file (a note a command-line sender sent as a
    ///   file): its first line that is not blank describes the hex instead, and the addresses in
    ///   it are links after the file's.
    public func hex(
        files saved: [(name: String, path: String)], from alias: String, senderID: String?, text: String? = nil
    ) -> HexJM {
        let names = saved.prefix(Self.namesDescribed).map(\.name).joined(separator: ", ")
        let more = saved.count > Self.namesDescribed ? " and \(saved.count - Self.namesDescribed) more" : ""
        let named = saved.count == 1 ? names : "\(saved.count) files: \(names)\(more)"
        let firstLine = text?.split(whereSeparator: \.isNewline).lazy.map { $0.trimmed }.first { !$0.isEmpty }
        let fileLinks = saved.map {
            LinkJM(url: LinkURL.file(path: $0.path), linkDescription: $0.name, service: Self.fileService)
        }
        // Past `maximumLinks` files (an offer may name a thousand), the text lends no link.
        let textLinks = Self.links(in: text ?? "").prefix(max(0, Self.maximumLinks - fileLinks.count)).map {
            LinkJM(url: $0, linkDescription: LinkURL.parse($0).map(LinkURL.description))
        }
        return HexJM(
            senderUUID: senderID, senderName: alias,
            hexDescription: firstLine.map { $0.clipped(toUTF8: Self.maximumDescribingLineBytes) } ?? named,
            hexColor: color, links: fileLinks + textLinks)
    }
}
