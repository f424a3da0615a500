#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder where hexd keeps its state: the database, the control socket and the lock file.
public struct DataDirectory: Sendable {
    public let path: String

    /// The directory chosen by, in order: `explicit` (a flag), `HEXD_DATA_DIR`,
    /// `$XDG_DATA_HOME/hexd`, `~/.local/share/hexd`.
    public init(explicit: String?, environment: [String: String]) {
        if let explicit, !explicit.isEmpty {
            path = explicit
        } else if let fromEnvironment = environment["HEXD_DATA_DIR"], !fromEnvironment.isEmpty {
            path = fromEnvironment
        } else if let dataHome = environment["XDG_DATA_HOME"], !dataHome.isEmpty {
            path = dataHome + "/hexd"
        } else {
            path = (environment["HOME"] ?? ".") + "/.local/share/hexd"
        }
    }

    /// The database file inside this directory.
    public var databasePath: String { path + "/" + HexDatabase.fileName }

    /// Creates the directory (and its parents) readable by the owner only, if it does not exist.
    public func create() throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw DataDirectoryError(path: prefix, reason: String(cString: strerror(errno)))
            }
        }
    }
}

/// The data directory could not be created.
public struct DataDirectoryError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot create \(path): \(reason)" }
}
