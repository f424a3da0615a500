import HexKit

extension KDEConnectShare {
    /// The shares a hex is sent to a KDE Connect device as. By default one: a lone link without a
    /// description as a `url` (the device opens it), anything else as a `text` with the
    /// description and each link's address on a line of its own (`ForeignMessage.text(of:)`).
    /// With `eachLink`, every link as a `url` of its own (each opens), after the description as a
    /// `text` when there is one. Empty for a hex with nothing to show.
    public static func shares(of hex: HexJM, eachLink: Bool = false) -> [KDEConnectShare] {
        guard eachLink else {
            guard let text = ForeignMessage.text(of: hex) else { return [] }
            let isLoneLink = hex.links?.compactMap(\.url).contains(text) == true
            return [isLoneLink ? .url(text) : .text(text)]
        }
        let description = (hex.hexDescription ?? "").trimmed
        let urls = (hex.links ?? []).compactMap(\.url).filter { !$0.isEmpty }
        return (description.isEmpty ? [] : [.text(description)]) + urls.map { .url($0) }
    }

    /// The hex a shared URL or text becomes, sent by the device named `name`: a URL as a hex with
    /// that one link (a URL that is no link hexd takes is kept as text), a text as a hex whose
    /// description it is, with every web address in it as a link. Nil for a file, which becomes a
    /// hex once it is saved.
    public func hex(from name: String, senderID: String) -> HexJM? {
        switch self {
        case .url(let url):
            guard LinkURL.parse(url) != nil else {
                return ForeignMessage.kdeConnect.hex(url, from: name, senderID: senderID)
            }
            return HexJM(
                senderUUID: senderID, senderName: name, hexDescription: nil,
                hexColor: ForeignMessage.kdeConnect.color,
                links: [LinkJM(url: url, linkDescription: LinkURL.parse(url).map(LinkURL.description))])
        case .text(let text):
            return ForeignMessage.kdeConnect.hex(text, from: name, senderID: senderID)
        case .file:
            return nil
        }
    }
}
