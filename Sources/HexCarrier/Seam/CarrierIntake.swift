import HexKit

/// What hexd does with what a carrier's devices send and with the devices it finds, one rule for
/// every kind of peer: the accept policy, blocks and budgets, the store, the events, the arrivals
/// (notifications, the page, `--on-receive`) and the peer directory. The daemon's `Intake` is it.
package protocol CarrierIntake: Sendable {
    /// Keeps `envelope`, which a sender with no identity beyond its connection sent (a stranger,
    /// accounted by its IP `address`; `remote` names it in the log), with `attachedBytes` of
    /// files that came with its hex; whether it is kept (stored now, or before).
    func keepFromStranger(_ envelope: Envelope, from remote: String, address: String, attachedBytes: Int) async
        -> Bool
    /// Why `bytes` from a stranger at `address` are not taken now (the accept policy, the budgets);
    /// nil when they are. The disk's room is the downloads folder's to say.
    func strangerRefusal(of bytes: Int64, from address: String) async -> String?
    /// Tells the person (notifications, the page) that an offer of `what` from `name`, answered by
    /// its `key` (`hexctl pair --accept`), waits for them.
    func offerWaiting(name: String, key: String, what: String)
    /// A device of a carrier's was found: the directory remembers it, as a peer seen, under `id`.
    func deviceFound(id: String, name: String, versionID: String, address: String) async
}
