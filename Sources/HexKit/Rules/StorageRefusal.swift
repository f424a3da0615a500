/// Why a Store was refused for lack of room: a budget of the inbox (Ack `rejected`: it stays
/// full until its user acts) or the free space of the receiver's disk (Ack `failed`: space may
/// return, and the sender tries again). Protocol.md, section 11.1.
public enum StorageRefusal: Sendable, Hashable {
    /// The inbox holds `used` bytes of its `--inbox-budget`.
    case inboxBudget(used: Int, budget: Int)
    /// This sender (not paired) holds `used` bytes of its `--sender-budget`.
    case senderBudget(used: Int, budget: Int)
    /// Senders not paired hold `used` bytes of their `--strangers-budget` together.
    case strangersBudget(used: Int, budget: Int)
    /// The disk has `free` bytes, below `--min-free`: only paired senders are stored.
    case diskFloor(free: Int, floor: Int)
    /// The disk has `free` bytes, below `--min-free-hard`: nothing is stored.
    case diskHardFloor(free: Int, floor: Int)

    /// `rejected` for a budget, `failed` (try again later) for the disk.
    public var ackStatus: AckStatus {
        switch self {
        case .inboxBudget, .senderBudget, .strangersBudget: .rejected
        case .diskFloor, .diskHardFloor: .failed
        }
    }

    /// The receiver's option that sets the limit reached.
    public var option: String {
        switch self {
        case .inboxBudget: "--inbox-budget"
        case .senderBudget: "--sender-budget"
        case .strangersBudget: "--strangers-budget"
        case .diskFloor: "--min-free"
        case .diskHardFloor: "--min-free-hard"
        }
    }

    /// The limit reached and how near, for the receiver's log: `--sender-budget 4.0 KiB (3.1 KiB
    /// held)`, `--min-free 256.0 MiB (200.0 MiB free)`.
    public var summary: String {
        let text = ByteCount.text
        return switch self {
        case .inboxBudget(let used, let limit), .senderBudget(let used, let limit),
            .strangersBudget(let used, let limit):
            "\(option) \(text(limit)) (\(text(used)) held)"
        case .diskFloor(let free, let floor), .diskHardFloor(let free, let floor):
            "\(option) \(text(floor)) (\(text(free)) free)"
        }
    }

    /// The sentence an Ack carries to the sender: which limit, how full, and what would make room.
    public var message: String {
        let text = ByteCount.text
        return switch self {
        case .inboxBudget(let used, let budget):
            "the inbox is full (\(text(used)) of its \(option) \(text(budget))): nothing stored; "
                + "its user can delete hexes or raise \(option)"
        case .senderBudget(let used, let budget):
            "the inbox holds \(text(used)) from you, the most a sender not paired may keep there "
                + "(\(option) \(text(budget))): nothing stored; pair with its user (hexctl pair), "
                + "or ask them to delete some or to raise \(option)"
        case .strangersBudget(let used, let budget):
            "the inbox holds \(text(used)) from senders not paired, the most they may keep there together "
                + "(\(option) \(text(budget))): nothing stored; pair with its user (hexctl pair), "
                + "or ask them to raise \(option)"
        case .diskFloor(let free, let floor):
            "the receiver's disk has \(text(free)) free, below its \(option) \(text(floor)), "
                + "under which only paired senders are stored: nothing stored; try again later"
        case .diskHardFloor(let free, let floor):
            "the receiver's disk has \(text(free)) free, below its \(option) \(text(floor)), "
                + "under which nothing is stored: nothing stored; try again later"
        }
    }
}

/// The free space of the disk the inbox is on, as a batch of Stores uses it up.
public struct DiskRoom: Sendable, Hashable {
    /// Bytes free for hexd's writes now.
    public private(set) var free: Int
    /// Below it, only paired senders are stored (`--min-free`).
    public let floor: Int
    /// Below it, nothing is stored (`--min-free-hard`).
    public let hardFloor: Int

    public init(free: Int, floor: Int, hardFloor: Int) {
        self.free = free
        self.floor = floor
        self.hardFloor = hardFloor
    }

    /// A disk that never runs out (tests and tools that are not a daemon).
    public static let unlimited = DiskRoom(free: .max, floor: 0, hardFloor: 0)

    /// A stored byte costs about this many on disk before a checkpoint: once in the write-ahead
    /// log, once in the database file.
    public static let bytesWrittenPerByte = 2

    /// Why `bytes` more would take the disk below a floor, or nil when they fit.
    public func refusal(ofBytes bytes: Int, paired: Bool) -> StorageRefusal? {
        let after = Self.subtract(bytes, from: free)
        if after < hardFloor { return .diskHardFloor(free: free, floor: hardFloor) }
        if !paired && after < floor { return .diskFloor(free: free, floor: floor) }
        return nil
    }

    /// Counts `bytes` stored since the free space was read.
    public mutating func spend(_ bytes: Int) {
        free = Self.subtract(bytes, from: free)
    }

    /// What is left of `free` once `bytes` are written, without overflow whatever the numbers.
    private static func subtract(_ bytes: Int, from free: Int) -> Int {
        let written = min(max(bytes, 0), Int.max / bytesWrittenPerByte) * bytesWrittenPerByte
        let (left, overflow) = free.subtractingReportingOverflow(written)
        return overflow ? .min : left
    }
}
