import HexKit

/// Turns a file (or a URL) into a share link.
protocol LinkProvider: Sendable {
    /// The `service` of the links it makes.
    var service: Service { get }
    /// The link for `path`.
    /// - Throws: `LinkProviderError`, saying what went wrong with this path.
    func link(for path: String) async throws -> String
}

/// Why a provider could not make a link; the message names the path.
struct LinkProviderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The arguments are URLs already: each is checked (a scheme and a host) and used as it is.
struct URLLinkProvider: LinkProvider {
    let service = Service.unknown

    func link(for path: String) async throws -> String {
        guard LinkURL.parse(path) != nil else { throw LinkProviderError("\(path) is not a URL with a scheme and a host, nor a file:// URL") }
        return path
    }
}

/// Local files as `file://` URLs: the path must be absolute (or a `file://` URL) and exist.
struct FileLinkProvider: LinkProvider {
    let service: Service = "File"

    func link(for path: String) async throws -> String {
        let filePath = path.hasPrefix("file://") ? URL(string: path)?.path ?? "" : path
        guard filePath.hasPrefix("/") else { throw LinkProviderError("\(path) is not an absolute path or file:// URL") }
        guard FileManager.default.fileExists(atPath: filePath) else { throw LinkProviderError("\(filePath) does not exist") }
        return URL(fileURLWithPath: filePath).absoluteString
    }
}
