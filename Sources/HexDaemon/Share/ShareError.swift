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

    var description: String {
        switch self {
        case .unknownProvider(let name, let available):
            "no link provider \"\(name.clipped(toUTF8: 80))\"; this daemon has: \(available.joined(separator: ", "))"
                + (name == "command" ? " (configure one with --link-command)" : "")
        case .queryInFlight(let id): "a query \(id.uuidString) is in flight already"
        case .linkFailed(let path?, let reason): "\(path): \(reason)"
        case .linkFailed(nil, let reason): reason
        case .cancelled: "the share was cancelled"
        }
    }
}
