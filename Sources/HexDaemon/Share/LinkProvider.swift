import HexKit

/// Turns a file (or a URL) into a share link.
protocol LinkProvider: Sendable {
    /// The `service` of the links it makes.
    var service: Service { get }
    /// The link for `path`, made for `recipient` when the share goes to a peer known by its key.
    /// - Throws: `LinkProviderError`, saying what went wrong with this path.
    func link(for path: String, to recipient: FileGrants.Recipient?) async throws -> String
}

/// Why a provider could not make a link; the message names the path.
struct LinkProviderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The arguments are URLs already: each is checked (a scheme and a host) and used as it is.
struct URLLinkProvider: LinkProvider {
    let service = Service.unknown

    func link(for path: String, to recipient: FileGrants.Recipient?) async throws -> String {
        guard LinkURL.parse(path) != nil else {
            throw LinkProviderError("\(path) is not a URL with a scheme and a host, nor a file:// URL")
        }
        return path
    }
}

/// Local files as `file://` URLs: the path must be absolute (or a `file://` URL) and exist.
struct FileLinkProvider: LinkProvider {
    let service: Service = "File"

    func link(for path: String, to recipient: FileGrants.Recipient?) async throws -> String {
        let filePath = try Self.absolutePath(path)
        guard FileManager.default.fileExists(atPath: filePath) else {
            throw LinkProviderError("\(filePath) does not exist")
        }
        return URL(fileURLWithPath: filePath).absoluteString
    }

    /// The path `path` names: itself when absolute, or a `file://` URL's path.
    /// - Throws: `LinkProviderError` for anything else.
    static func absolutePath(_ path: String) throws -> String {
        let filePath = path.hasPrefix("file://") ? URL(string: path)?.path ?? "" : path
        guard filePath.hasPrefix("/") else { throw LinkProviderError("\(path) is not an absolute path or file:// URL") }
        return filePath
    }
}

/// Files shared with one peer, fetched from this daemon by that peer's key alone (`FileGrants`):
/// each file is hashed and granted, and its link is a `hexd://` link naming this device.
struct PeerLinkProvider: LinkProvider {
    let service: Service = "hexd"
    let grants: FileGrants
    /// This device's ID, which the links name as their owner.
    let ownerID: String

    func link(for path: String, to recipient: FileGrants.Recipient?) async throws -> String {
        guard let recipient else {
            throw LinkProviderError(
                "peer links are for a peer known by its key; choose --provider file, url or command")
        }
        let grant = try await grants.grant(try FileLinkProvider.absolutePath(path), to: recipient)
        return grant.link(ownerID: ownerID).text
    }
}
