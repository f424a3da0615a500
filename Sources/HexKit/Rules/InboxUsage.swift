/// What the inbox holds, by account, against an `InboxBudget`. Kept in memory by its owner and
/// changed only with the commits it mirrors: changes since `beginBatch()` are undone by
/// `rollBackBatch()` when their commit fails.
public struct InboxUsage: Sendable {
    /// Bytes in the inbox, all senders.
    public private(set) var total = 0
    /// Bytes in the inbox from accounts that are not paired.
    public private(set) var strangers = 0
    /// At most one entry per account with a hex in the inbox: bounded by what the budgets let in.
    private var byAccount: [SenderAccount: Int] = [:]
    private var paired: Set<SenderAccount> = []
    /// The changes since `beginBatch()`; nil outside a batch.
    private var batch: [(account: SenderAccount, bytes: Int)]?

    /// - Parameters:
    ///   - byAccount: the bytes each account's hexes in the inbox hold.
    ///   - paired: the accounts of paired peers.
    public init(byAccount: [SenderAccount: Int] = [:], paired: Set<SenderAccount> = []) {
        self.byAccount = byAccount.filter { $0.value > 0 }
        self.paired = paired
        for (account, bytes) in self.byAccount {
            total += bytes
            if !paired.contains(account) { strangers += bytes }
        }
    }

    /// The bytes an account's hexes hold in the inbox.
    public func used(by account: SenderAccount) -> Int { byAccount[account] ?? 0 }

    /// The account not paired that holds the most, with its bytes (for `status`).
    public var largestStranger: (account: SenderAccount, bytes: Int)? {
        byAccount.filter { !paired.contains($0.key) }.max { $0.value < $1.value }.map { ($0.key, $0.value) }
    }

    /// Why `bytes` more from `account` would not fit `budget`, or nil when they fit. A paired
    /// sender is held to the inbox's budget alone.
    public func refusal(
        ofBytes bytes: Int, from account: SenderAccount, paired: Bool,
        budget: InboxBudget
    ) -> StorageRefusal? {
        if total > budget.inbox - bytes { return .inboxBudget(used: total, budget: budget.inbox) }
        guard !paired else { return nil }
        let mine = used(by: account)
        if mine > budget.perSender - bytes { return .senderBudget(used: mine, budget: budget.perSender) }
        if strangers > budget.strangers - bytes { return .strangersBudget(used: strangers, budget: budget.strangers) }
        return nil
    }

    /// Counts `bytes` more for `account` (negative: hexes deleted).
    public mutating func add(_ bytes: Int, for account: SenderAccount) {
        byAccount[account, default: 0] += bytes
        if byAccount[account] ?? 0 <= 0 { byAccount[account] = nil }
        total += bytes
        if !paired.contains(account) { strangers += bytes }
        batch?.append((account, bytes))
    }

    /// Takes `accounts` as the paired ones from now on (a peer paired, unpaired or forgotten).
    public mutating func setPaired(_ accounts: Set<SenderAccount>) {
        paired = accounts
        strangers = byAccount.reduce(0) { $0 + (accounts.contains($1.key) ? 0 : $1.value) }
    }

    /// Whether `account` is a paired peer's.
    public func isPaired(_ account: SenderAccount) -> Bool { paired.contains(account) }

    /// Starts a batch of changes that `rollBackBatch()` can undo, until `endBatch()`.
    public mutating func beginBatch() { batch = [] }

    /// Keeps the changes since `beginBatch()`: their commit succeeded.
    public mutating func endBatch() { batch = nil }

    /// Undoes the changes since `beginBatch()`: their commit failed.
    public mutating func rollBackBatch() {
        let undone = batch ?? []
        batch = nil
        for change in undone.reversed() { add(-change.bytes, for: change.account) }
    }
}
