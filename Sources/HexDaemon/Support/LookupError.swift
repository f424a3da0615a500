/// Something the user named (a peer, a hex, a share query) that matches nothing, or more than
/// one thing. The text is echoed clipped: it came from a client.
enum LookupError: Error, Equatable, CustomStringConvertible {
    case noPeer(String)
    case ambiguousPeer(String, matches: Int)
    /// `place`: where it was looked for ("the inbox", "My Hexlist"...).
    case noHex(String, place: String)
    case ambiguousHex(String, matches: Int, place: String)
    case noQuery(String)
    case ambiguousQuery(String, matches: Int)

    var description: String {
        switch self {
        case .noPeer(let text): "no peer named \(text.clipped(toUTF8: 80)) (nor with a UUID starting so); see hexctl peers, or give HOST:PORT"
        case .ambiguousPeer(let text, let count): "\(text.clipped(toUTF8: 80)) matches \(count) peers; use more of the UUID"
        case .noHex(let text, let place): "no hex \(text.clipped(toUTF8: 80)) in \(place)"
        case .ambiguousHex(let text, let count, let place): "\(text.clipped(toUTF8: 80)) matches \(count) hexes in \(place); give more of the id"
        case .noQuery(let text): "no share query \(text.clipped(toUTF8: 80)) in flight"
        case .ambiguousQuery(let text, let count): "\(text.clipped(toUTF8: 80)) matches \(count) share queries; give more of the id"
        }
    }
}
