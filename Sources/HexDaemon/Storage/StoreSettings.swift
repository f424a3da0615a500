import HexCarrier
import HexCommandLine
import HexKit

/// What the store's service is told: the inbox's budgets and the disk's floors (Protocol.md,
/// section 11.1). Each option is declared once, in `declared`.
public struct StoreSettings: Sendable, Hashable {
    public var budget = InboxBudget.default
    /// Below it, only paired senders are stored.
    public var freeFloor = FreeSpaceFloor.larger(.bytes(256 << 20), .percent(2))
    /// Below it, nothing is stored.
    public var hardFreeFloor = FreeSpaceFloor.smaller(.bytes(64 << 20), .percent(1))
    /// The file kept in the data directory and given back to the disk when it fills up, so that
    /// hexd can still start, checkpoint and answer its user.
    public var reserve = 16 << 20

    public init() {}

    /// The options of these settings.
    public static let declared: [Setting<StoreSettings>] = [
        size(
            "inbox-budget", \.budget.inbox, default: InboxBudget.default.inbox,
            help: "Bytes the inbox may hold, every sender together; past it, hexes are refused (Ack rejected)."),
        size(
            "sender-budget", \.budget.perSender, default: InboxBudget.default.perSender,
            help: "Bytes of the inbox one sender that is not paired may fill: one key over TLS, one address "
                + "over plaintext. Paired senders are held to --inbox-budget alone."),
        size(
            "strangers-budget", \.budget.strangers, default: InboxBudget.default.strangers,
            help: "Bytes of the inbox all senders that are not paired may fill together."),
        floor(
            "min-free", \.freeFloor, default: StoreSettings().freeFloor,
            help: "Free space on the data directory's disk below which only paired senders are stored "
                + "(Ack failed: try again later)."),
        floor(
            "min-free-hard", \.hardFreeFloor, default: StoreSettings().hardFreeFloor,
            help: "Free space below which nothing is stored."),
        size(
            "disk-reserve", \.reserve, default: StoreSettings().reserve, allowsZero: true,
            help: "A file kept in the data directory and removed when the disk fills up, so that hexd can "
                + "still start, checkpoint and answer hexctl; 0 for none."),
    ]

    /// A size in bytes (`32MiB`, `1GiB`, `4096`), at most 1 PiB.
    private static func size(
        _ name: String, _ keyPath: WritableKeyPath<StoreSettings, Int> & Sendable, default value: Int,
        allowsZero: Bool = false, help: String
    ) -> Setting<StoreSettings> {
        let smallest = allowsZero ? 0 : 1
        return Setting(
            name, value: "size", help: help + " Default: \(ByteCount.text(value)).",
            expected: "a size such as 512KiB, 32MiB or 1GiB (\(smallest) to 1 PiB)", keyPath
        ) {
            ByteCount.parse($0).flatMap { (smallest...(1 << 50)).contains($0) ? $0 : nil }
        }
    }

    private static func floor(
        _ name: String, _ keyPath: WritableKeyPath<StoreSettings, FreeSpaceFloor> & Sendable,
        default value: FreeSpaceFloor, help: String
    ) -> Setting<StoreSettings> {
        Setting(
            name, value: "size|percent", help: help + " Default: \(value).",
            expected: "a size such as 256MiB, or a share of the disk such as 2%", keyPath,
            parse: FreeSpaceFloor.parse)
    }
}
