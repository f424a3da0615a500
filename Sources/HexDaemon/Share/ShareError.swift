import HexKit

/// Why a share gathered no links.
enum ShareError: Error, Equatable, CustomStringConvertible {
    /// The request names a provider this daemon does not have.
    case unknownProvider(String, available: [String])
    /// A query with this id is in flight already.
    case queryInFlight(UUID)
    /// A file got no link (the first failure ends the query), or the time ran out with files
    /// still waiting (`path` is the first of them).
    case linkFailed(path: String?, reason: String)
    /// `hexctl cancel`, or the client left.
    case cancelled
    /// No provider was named for a share to a peer that cannot fetch files from this daemon (a
    /// legacy peer, or an address no key is known for), and no link command is configured.
    case noProviderFor(String)

    var description: String {
        switch self {
        case .unknownProvider(let name, let available):
            "no link provider \"\(name.clipped(toUTF8: 80))\"; this daemon has: \(available.joined(separator: ", "))"
                + (name == "command" ? " (configure one with --link-command)" : "")
        case .queryInFlight(let id): "a query \(id.uuidString) is in flight already"
        case .linkFailed(let path?, let reason): "\(path): \(reason)"
        case .linkFailed(nil, let reason): reason
        case .cancelled: "the share was cancelled"
        case .noProviderFor(let peer):
            "\(peer.clipped(toUTF8: 200)) cannot fetch files from this daemon (a legacy peer, or an address no key is "
                + "known for): choose how its links are made with --provider file, url or command"
        }
    }
}
