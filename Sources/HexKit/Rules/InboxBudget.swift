/// How much of the inbox senders may fill (Protocol.md, section 11.1). A paired sender is held
/// only to `inbox`; every other sender also to `perSender`, and all of them together to
/// `strangers`. Nothing stored is ever evicted to make room: past a budget, hexes are refused.
public struct InboxBudget: Sendable, Hashable {
    /// Bytes the whole inbox may hold.
    public var inbox: Int
    /// Bytes one sender that is not paired may hold: one key over TLS, one address over plaintext.
    public var perSender: Int
    /// Bytes all senders that are not paired may hold together.
    public var strangers: Int

    public init(inbox: Int, perSender: Int, strangers: Int) {
        self.inbox = inbox
        self.perSender = perSender
        self.strangers = strangers
    }

    /// 1 GiB in all; 32 MiB per sender not paired, 128 MiB for all of them.
    public static let `default` = InboxBudget(inbox: 1 << 30, perSender: 32 << 20, strangers: 128 << 20)
    /// No budget at all (tests and tools that are not a daemon).
    public static let unlimited = InboxBudget(inbox: .max, perSender: .max, strangers: .max)
}
