/// A file this device shared with one peer (the `peer` link provider): what was shared, with
/// whom, until when, and how often it was fetched. Only the recipient's key redeems it, and only
/// while the file still holds the bytes hashed when it was granted.
public struct FileGrant: Sendable, Hashable, Codable, Identifiable {
    /// 32 lowercase hex digits (`GrantID`).
    public var id: String
    /// The file's absolute path on this device.
    public var path: String
    /// The name the link shows.
    public var name: String
    public var size: Int64
    /// 64 lowercase hex digits.
    public var sha256: String
    /// The device ID of the one peer that may fetch it, uppercase, and its name when granted.
    public var recipientID: String
    public var recipientName: String
    public var created: Date
    public var expires: Date
    public var revoked: Date?
    /// Whole fetches served, and when the last one ended.
    public var fetches: Int
    public var lastFetched: Date?
    /// How the file looked when hashed: a serve that finds it otherwise hashes it again first.
    public var identity: FileIdentity

    public init(
        id: String = GrantID.random(), path: String, name: String, size: Int64, sha256: String, recipientID: String,
        recipientName: String, created: Date, expires: Date, revoked: Date? = nil, fetches: Int = 0,
        lastFetched: Date? = nil, identity: FileIdentity
    ) {
        self.id = id
        self.path = path
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.recipientID = recipientID
        self.recipientName = recipientName
        self.created = created
        self.expires = expires
        self.revoked = revoked
        self.fetches = fetches
        self.lastFetched = lastFetched
        self.identity = identity
    }

    /// The link the recipient gets, naming this device as the owner.
    public func link(ownerID: String) -> PeerFileLink {
        PeerFileLink(ownerID: ownerID, grant: id, name: name)
    }
}

/// What identifies a file's content cheaply: a file with the same device, inode, size and
/// modification time is taken to hold the same bytes (as `make` and `rsync` take it).
public struct FileIdentity: Sendable, Hashable, Codable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Nanoseconds since 1970.
    public var modified: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
    }
}
