import HexKit

/// Which files of a received hex to fetch, and where to (`hexctl fetch`).
public struct FetchRequest: Sendable, Equatable {
    /// A hex's id, or a unique prefix of one.
    public var hex: String
    /// The links to fetch by their number in the hex (1 is the first); empty fetches every
    /// `hexd://` link of the hex.
    public var numbers: [Int]
    /// An absolute folder; nil is the daemon's downloads folder (`hexd --downloads`).
    public var downloads: String?

    public init(hex: String, numbers: [Int] = [], downloads: String? = nil) {
        self.hex = hex
        self.numbers = numbers
        self.downloads = downloads
    }
}

/// One file of a fetch: how far it came while it comes, then how it ended.
public struct FetchReport: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable {
        case fetching, fetched, failed
    }

    /// The link's number in the hex (1 is the first).
    public var link: Int
    /// The name the file gets (made safe), or the link's text when it is no `hexd://` link.
    public var name: String
    public var state: State
    /// Bytes held so far (the partial file's), all of them once fetched.
    public var received: Int64
    /// The file's size, once its owner said.
    public var size: Int64?
    /// Above 0 when the fetch went on from a partial file that held this many verified bytes.
    public var resumedFrom: Int64?
    /// Where the file landed; when it failed, the partial file kept for a later resume.
    public var path: String?
    public var sha256: String?
    /// Why it failed.
    public var message: String?
    public var milliseconds: Double?

    public init(
        link: Int, name: String, state: State, received: Int64 = 0, size: Int64? = nil, resumedFrom: Int64? = nil,
        path: String? = nil, sha256: String? = nil, message: String? = nil, milliseconds: Double? = nil
    ) {
        self.link = link
        self.name = name
        self.state = state
        self.received = received
        self.size = size
        self.resumedFrom = resumedFrom
        self.path = path
        self.sha256 = sha256
        self.message = message
        self.milliseconds = milliseconds
    }
}
