/// What the inbox holds against its budgets and what the disk has free against its floors
/// (`status`; Protocol.md, section 11.1). Sizes are bytes.
public struct StorageReport: Sendable, Codable, Equatable {
    /// The inbox, every sender, against `--inbox-budget`.
    public var inboxBytes: Int
    public var inboxBudget: Int
    /// Senders not paired together, against `--strangers-budget`.
    public var strangersBytes: Int
    public var strangersBudget: Int
    /// The sender not paired that holds the most (`key 6F9619FF`, `address 192.168.1.20`), and
    /// what it holds, against `--sender-budget`; nil when no such sender has hexes in the inbox.
    public var largestSender: String?
    public var largestSenderBytes: Int
    public var senderBudget: Int
    /// The data directory's disk: free bytes, and the floors `--min-free` and `--min-free-hard`
    /// come to on it; nil when it cannot be read.
    public var diskFree: Int?
    public var diskFloor: Int?
    public var diskHardFloor: Int?
    /// Whom the disk's free space refuses now: `nothing`, `senders not paired` or `every Store`.
    public var refusing: String
    /// The bytes held in reserve for a full disk (`--disk-reserve`); 0 once given back.
    public var reserveBytes: Int

    public init(
        inboxBytes: Int, inboxBudget: Int, strangersBytes: Int, strangersBudget: Int, largestSender: String?,
        largestSenderBytes: Int, senderBudget: Int, diskFree: Int?, diskFloor: Int?, diskHardFloor: Int?,
        refusing: String, reserveBytes: Int
    ) {
        self.inboxBytes = inboxBytes
        self.inboxBudget = inboxBudget
        self.strangersBytes = strangersBytes
        self.strangersBudget = strangersBudget
        self.largestSender = largestSender
        self.largestSenderBytes = largestSenderBytes
        self.senderBudget = senderBudget
        self.diskFree = diskFree
        self.diskFloor = diskFloor
        self.diskHardFloor = diskHardFloor
        self.refusing = refusing
        self.reserveBytes = reserveBytes
    }
}
