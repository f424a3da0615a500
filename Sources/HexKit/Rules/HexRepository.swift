/// Persistence for hexes and the block list, as `HexManager` needs it.
///
/// HexKit does no I/O: the SQLite store (module HexStore) implements this. Every method that
/// writes is one transaction: it happens whole or not at all.
public protocol HexRepository {
    /// Inserts `hex` with its links. An inbox hex goes on top of the inbox; a My Hexlist hex on
    /// top of My Hexlist.
    ///
    /// - Parameter messageID: when given, recorded in the same transaction; if it was recorded
    ///   before, nothing is inserted.
    /// - Returns: false when `messageID` had been recorded before (a duplicate), else true.
    /// - Parameter account: whose share of the inbox's budgets the hex counts against (nil for
    ///   the user's own); recorded with `charge`.
    /// - Parameter charge: what it counts against them: its `storedBytes`, and the bytes of the
    ///   files that came with it (a LocalSend device's).
    func insert(_ hex: Hex, messageID: String?, account: SenderAccount?, charge: Int) throws -> Bool

    /// Whether a hex with this `messageID` was stored.
    func hasReceived(messageID: String) throws -> Bool

    /// The bytes the inbox's hexes (`Hex.storedBytes`) and the kept Alerts
    /// (`ReceivedAlert.storedBytes`) hold, by account.
    func inboxUsage() throws -> [SenderAccount: Int]

    /// Keeps an Alert, counted against `account`.
    func insertAlert(_ alert: ReceivedAlert, account: SenderAccount) throws

    /// The kept Alerts, newest first: at most `limit`, after the Alert `cursor` or from the top.
    /// - Returns: nil when `cursor` is not a kept Alert.
    func alerts(after cursor: UUID?, limit: Int) throws -> [ReceivedAlert]?

    /// The ids of the kept Alerts whose id (uppercase) starts with `prefix`, at most `limit`.
    func alertIDs(idPrefix prefix: String, limit: Int) throws -> [UUID]

    /// Deletes a kept Alert; returns it, with what it counted against and whose; nil when there
    /// is none.
    func deleteAlert(id: UUID) throws -> (alert: ReceivedAlert, account: SenderAccount, bytes: Int)?

    /// What an inbox hex counts against the budgets, and whose; nil when it is not in the inbox.
    func inboxCharge(ofHex id: UUID) throws -> (account: SenderAccount, bytes: Int)?

    /// The UUIDs of the peers paired with `hexctl pair`, uppercase.
    func pairedPeers() throws -> [String]

    /// The hex with this id, with its links in order.
    func hex(id: UUID) throws -> Hex?

    /// The hexes of a location with their links: the inbox newest first, My Hexlist in user order.
    func hexes(in location: HexLocation) throws -> [Hex]

    /// The ids of the hexes whose id (uppercase) starts with `prefix`, in `location` or anywhere,
    /// at most `limit`: nothing else is read, so telling one match from several costs little.
    func hexIDs(idPrefix prefix: String, in location: HexLocation?, limit: Int) throws -> [UUID]

    /// One page of a location's hexes without their links, in list order (the inbox newest first,
    /// My Hexlist in user order): at most `limit`, starting after the hex `cursor`, or from the top.
    /// Each string is read cut to `fieldCharacters` characters at most, so a page costs little
    /// whatever is stored.
    /// - Returns: nil when `cursor` is not a hex of the location.
    func summaries(in location: HexLocation, after cursor: UUID?, limit: Int, fieldCharacters: Int) throws
        -> [HexSummary]?

    /// How many hexes each location holds, and how many inbox hexes are not checked yet,
    /// counted by the database without reading a hex.
    func counts() throws -> HexCounts

    /// Marks an inbox hex checked. Returns false when there is no inbox hex with this id.
    func markChecked(id: UUID) throws -> Bool

    /// Deletes a hex and its links. Returns false when there is no hex with this id.
    func delete(id: UUID) throws -> Bool

    /// Moves a My Hexlist hex to `index` (clamped to the list), shifting the others.
    /// Returns false when there is no My Hexlist hex with this id.
    func moveInHexlist(id: UUID, to index: Int) throws -> Bool

    /// Whether hexes from this sender UUID are refused. UUIDs compare case-insensitively.
    func isBlocked(senderUUID: String) throws -> Bool

    /// Adds a sender UUID to the block list, or removes it. Returns false when nothing changed.
    func setBlocked(_ blocked: Bool, senderUUID: String) throws -> Bool

    /// The blocked sender UUIDs, uppercase, sorted.
    func blockedSenders() throws -> [String]

    /// The key pinned to a peer UUID (any case), if any.
    func pin(forPeer uuid: String) throws -> PeerPin?

    /// The peer UUID a key is pinned to, if any.
    func pinnedPeer(forKey fingerprint: String) throws -> String?

    /// Pins `pin.peerUUID` to `pin.fingerprint`, replacing what that UUID had.
    func setPin(_ pin: PeerPin) throws

    /// Forgets the key pinned to a peer UUID. Returns false when there was none.
    func removePin(forPeer uuid: String) throws -> Bool

    /// Moves what is kept about a peer from one UUID to another, in one transaction: its pin
    /// (with its trust), its block and its outbox. What the new UUID had is replaced.
    func movePeer(from old: String, to new: String) throws
}

extension HexRepository {
    /// Inserts a hex that counts against no account (the user's own, or a test's).
    public func insert(_ hex: Hex, messageID: String?) throws -> Bool {
        try insert(hex, messageID: messageID, account: nil, charge: hex.storedBytes)
    }
}
