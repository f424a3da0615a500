import HexKit

/// Something the user named (a peer, a hex, an alert, a share query, an outbox entry,
/// a grant) that matches nothing, or
/// more than one thing. The text is echoed clipped: it came from a client.
package enum LookupError: Error, Equatable, CustomStringConvertible {
    /// Matches of an ambiguous prefix counted at most: past it, the message says "at least".
    package static let matchesCounted = 100

    /// What the person may type for `id`: a prefix of an ID of a registered form (a hexd peer's
    /// UUID too), else all of it (an offer's key, which no prefix names).
    private static func example(of id: String) -> String {
        id.canonicalUUID != nil || PeerIDForms.form(of: id)?.owns(id) == true ? String(id.prefix(18)) : id
    }

    case noPeer(String)
    /// An IPv6 address with a port, not in brackets: `write` is how to write it.
    case unbracketed(String, write: String)
    case ambiguousPeer(String, matches: Int)
    /// A name that two devices of different kinds (a hexd peer, a device of a carrier's) both go by.
    case twoKinds(String, Namesake, Namesake)
    /// `place`: where it was looked for ("the inbox", "My Hexlist"...).
    case noHex(String, place: String)
    case ambiguousHex(String, matches: Int, place: String)
    case noQuery(String)
    case ambiguousQuery(String, matches: Int)
    /// No pairing request from this peer is waiting for the user (`hexctl pair --accept`).
    case noPairing(String)
    /// No key is pinned to this peer (`unpair`, `trust --reset`).
    case noPin(String)
    /// This peer's key is pinned but not paired (`unpair`).
    case notPaired(String)
    /// No send waiting in the outbox has an id starting so (`outbox retry`, `outbox cancel`).
    case noOutboxEntry(String)
    case ambiguousOutboxEntry(String)
    /// No kept Alert has an id starting so (`alerts delete`).
    case noAlert(String)
    case ambiguousAlert(String)
    /// No grant has an id starting so (`revoke`).
    case noGrant(String)
    case ambiguousGrant(String)

    package var description: String {
        switch self {
        case .unbracketed(let text, let written):
            "\(text.clipped(toUTF8: 80)) cannot be read as an address and a port: write an IPv6 address in brackets, "
                + "as \(written.clipped(toUTF8: 90))"
        case .noPeer(let text):
            "no peer named \(text.clipped(toUTF8: 80)) (nor with a UUID starting so); "
                + "see hexctl peers, or give HOST:PORT"
        case .ambiguousPeer(let text, let count):
            "\(text.clipped(toUTF8: 80)) matches \(count) peers; use more of the UUID"
        case .twoKinds(let text, let one, let other):
            "\(text.clipped(toUTF8: 80)) names both \(one.what) \(one.id) and \(other.what) \(other.id); give the ID "
                + "of the one you mean (or a unique prefix of it, such as \(Self.example(of: other.id)))"
        case .noHex(let text, let place): "no hex \(text.clipped(toUTF8: 80)) in \(place)"
        case .ambiguousHex(let text, let count, let place):
            "\(text.clipped(toUTF8: 80)) matches \(count < Self.matchesCounted ? "" : "at least ")\(count) hexes "
                + "in \(place); give more of the id"
        case .noQuery(let text): "no share query \(text.clipped(toUTF8: 80)) in flight"
        case .ambiguousQuery(let text, let count):
            "\(text.clipped(toUTF8: 80)) matches \(count) share queries; give more of the id"
        case .noPairing(let text):
            "no pairing request from \(text.clipped(toUTF8: 80)) is waiting; "
                + "on that peer, run: hexctl pair <this daemon>"
        case .noPin(let text): "no key is pinned to \(text.clipped(toUTF8: 80))"
        case .notPaired(let text): "\(text.clipped(toUTF8: 80)) is not paired (its key is pinned on first use)"
        case .noOutboxEntry(let text):
            "no send \(text.clipped(toUTF8: 80)) is waiting in the outbox (delivered, failed or cancelled?); "
                + "see hexctl outbox"
        case .ambiguousOutboxEntry(let text):
            "\(text.clipped(toUTF8: 80)) matches several sends in the outbox; give more of the id"
        case .noAlert(let text): "no alert \(text.clipped(toUTF8: 80)); see hexctl alerts"
        case .ambiguousAlert(let text): "\(text.clipped(toUTF8: 80)) matches several alerts; give more of the id"
        case .noGrant(let text): "no grant \(text.clipped(toUTF8: 80)); see hexctl grants"
        case .ambiguousGrant(let text): "\(text.clipped(toUTF8: 80)) matches several grants; give more of the id"
        }
    }
}

/// One of the things a name fits (`LookupError.twoKinds`): what it is, as the error says it, and its ID.
package struct Namesake: Equatable, Sendable {
    package let what: String
    package let id: String

    /// A hexd peer.
    package static func hexdPeer(_ id: String) -> Namesake { Namesake(what: "the hexd peer", id: id) }

    /// An offer waiting for the person, from a device of the carrier called `carrier`, by its key.
    package static func offer(of carrier: String, _ key: String) -> Namesake {
        Namesake(what: "the \(carrier) offer", id: key)
    }

    /// A device of the carrier called `carrier` (`Quick Share`).
    package static func device(of carrier: String, _ id: String) -> Namesake {
        Namesake(what: "the \(carrier) device", id: id)
    }
}
