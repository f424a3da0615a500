/// Why a `HexManager` request about the user's hexes could not be done. Nothing was changed.
public enum HexManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No hex has this id (in the location the request is about).
    case hexNotFound(UUID, in: HexLocation?)
    /// A colour that is not `#RRGGBB`.
    case invalidColor(String)
    /// No kept Alert has this id.
    case alertNotFound(UUID)

    public var description: String {
        switch self {
        case .hexNotFound(let id, let location?):
            "no hex \(id.uppercaseText) in \(location == .inbox ? "the inbox" : "My Hexlist")"
        case .hexNotFound(let id, nil):
            "no hex \(id.uppercaseText)"
        case .invalidColor(let color):
            "\"\(color)\" is not a colour of the form #RRGGBB"
        case .alertNotFound(let id):
            "no alert \(id.uppercaseText)"
        }
    }
}
