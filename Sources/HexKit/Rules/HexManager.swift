/// The rules for hexes: what a received envelope becomes, and how the inbox, My Hexlist and the
/// block list behave. What is written to a peer, and every reply, is `Dialect`'s.
///
/// Wire models are tolerant and all-optional; stored `Hex` values are always complete. This type
/// is the one place that turns one into the other, so the defaults table in Protocol.md is
/// implemented here and nowhere else. It is synchronous and not thread-safe: its owner (the
/// daemon) serialises calls, and the repository does the blocking I/O.
public struct HexManager {
    /// Who sends this daemon's hexes.
    public let identity: LocalIdentity
    /// The `versionID` this daemon writes in its envelopes.
    public let versionID: String
    /// Whose Stores and Alerts are taken.
    public let acceptPolicy: AcceptPolicy
    /// The daemon speaks TLS, so it knows device IDs derived from keys and refuses plaintext
    /// claiming one; false when it plays a legacy peer, which takes any sender as the original
    /// app did.
    public let knowsDerivedIDs: Bool
    /// What the inbox may hold (Protocol.md, section 11.1); unlimited unless set.
    public var budget = InboxBudget.unlimited
    /// What the inbox holds against `budget`: empty until `loadUsage()`, then kept with every
    /// Store and delete.
    public private(set) var usage = InboxUsage()
    /// The free space of the inbox's disk, which its owner reads before each batch of Stores;
    /// each hex stored counts against it until the next reading.
    public var diskRoom = DiskRoom.unlimited
    private let repository: any HexRepository

    public init(
        repository: any HexRepository, identity: LocalIdentity, versionID: String,
        accepting acceptPolicy: AcceptPolicy = .anyone,
        knowsDerivedIDs: Bool = true
    ) {
        self.repository = repository
        self.identity = identity
        self.versionID = versionID
        self.acceptPolicy = acceptPolicy
        self.knowsDerivedIDs = knowsDerivedIDs
    }

    // MARK: Receiving

    /// Reads what the inbox and the kept Alerts hold, by account, and which accounts are paired:
    /// once, when the daemon starts (one pass over their rows).
    public mutating func loadUsage() throws {
        usage = InboxUsage(byAccount: try repository.inboxUsage(), paired: try pairedAccounts())
    }

    /// Reads again which accounts are paired, after a pin changed.
    public mutating func pairingsChanged() throws {
        usage.setPaired(try pairedAccounts())
    }

    private func pairedAccounts() throws -> Set<SenderAccount> {
        Set(try repository.pairedPeers().map(SenderAccount.key))
    }

    /// Starts a batch of receives committed together (see `InboxUsage.beginBatch`).
    public mutating func beginBatch() { usage.beginBatch() }

    /// The batch's commit succeeded.
    public mutating func endBatch() { usage.endBatch() }

    /// The batch's commit failed: what it counted is taken back.
    public mutating func rollBackBatch() { usage.rollBackBatch() }

    /// Acts on an envelope received from a peer: stores a hex in the inbox (unless its sender is
    /// blocked, not admitted by the accept policy, or its `messageID` was stored before), keeps an
    /// Alert (from a sender the policy admits and that is not blocked), and refuses the rest.
    ///
    /// Returns only after the hex is committed, so an Ack built from the outcome never claims
    /// more than the database holds. A hex or an Alert that does not fit `budget` or `diskRoom`
    /// is refused whole (`noRoom`); a hex whose `messageID` was stored before is a `duplicate`
    /// (a delivery) all the same.
    /// - Throws: only errors of the repository (the database); the envelope itself never throws.
    /// - Parameters:
    ///   - proof: what the connection proved about the sender: a key over TLS, which must be the
    ///     one pinned to the envelope's `senderUUID` (and is pinned to it on first use), or
    ///     nothing over plain TCP, which cannot speak for a peer known by its key.
    ///   - address: the IP address the envelope came from: a plaintext sender's account.
    ///   - attachedBytes: the bytes of the files that came with a Store's hex (a LocalSend
    ///     device's files, saved in the downloads folder), counted against the budgets with it.
    public mutating func receive(
        _ envelope: Envelope, proof: SenderProof = .none, from address: String = "", attachedBytes: Int = 0,
        at time: Date = Date()
    ) throws -> ReceiveOutcome {
        switch envelope.operationType {
        case .alert:
            return try receiveAlert(envelope, proof: proof, from: address, at: time)
        case .store:
            return try receiveStore(envelope, proof: proof, from: address, attachedBytes: attachedBytes, at: time)
        default:
            return .unsupported(
                reason: "operationType \"\(envelope.operationType)\" is not supported by hexd \(versionID)")
        }
    }

    private mutating func receiveStore(
        _ envelope: Envelope, proof: SenderProof, from address: String, attachedBytes: Int, at time: Date
    ) throws -> ReceiveOutcome {
        if let objectType = envelope.jmObjectType, objectType != .hex {
            return .unsupported(
                reason: "a Store of jmObjectType \"\(objectType)\" is not supported by hexd \(versionID)")
        }
        guard let hexJM = envelope.hex else {
            return .invalid(reason: "a Store needs a Hex object in jmObject")
        }
        // Read strictly, so that no other spelling of an ID passes for a second identity: one that
        // is neither a UUID nor a LocalSend device's ID counts as missing (Protocol.md, section 4,
        // rule 12).
        let sender = hexJM.senderUUID.flatMap(\.canonicalSenderID) ?? ""
        let trust: SenderTrust
        switch try admit(sender, proof: proof) {
        case .success(let admitted): trust = admitted
        case .failure(let refusal): return refusal.outcome
        }
        var hex = Self.makeHex(from: hexJM, location: .inbox, at: time)
        hex.senderUUID = sender
        hex.senderTrust = trust
        let account = Self.account(of: proof, at: address)
        let (sum, overflow) = hex.storedBytes.addingReportingOverflow(max(attachedBytes, 0))
        let bytes = overflow ? Int.max : sum
        let paired = trust == .paired
        if let refusal = room(for: bytes, writing: hex.storedBytes, from: account, paired: paired) {
            // A repeat of a hex stored before was delivered then, whatever room is left now.
            if let messageID = envelope.messageID, try repository.hasReceived(messageID: messageID) {
                return .duplicate
            }
            return .noRoom(refusal, account: account)
        }
        guard try repository.insert(hex, messageID: envelope.messageID, account: account, charge: bytes) else {
            return .duplicate
        }
        counted(bytes, writing: hex.storedBytes, for: account)
        return .stored(hex)
    }

    /// Whether a hex of `bytes` (its own and its files') from `sender`, as `proof` shows it, would be
    /// stored now. Asked before a LocalSend device's offer is taken (its files uploaded, or its
    /// message kept), so that nothing is written for a hex that would be refused. A key met for
    /// the first time is pinned here, as a Store from it would pin it.
    public mutating func admission(
        of sender: String, proof: SenderProof, from address: String, bytes: Int
    ) throws -> Admission {
        let id = sender.canonicalSenderID ?? ""
        if try isBlocked(anyOf: [id, proof.deviceID]) { return .refused(blockedYou) }
        // Only a sender that proved a key can be paired, and so be let in by its person.
        let askable = proof.deviceID != nil
        switch try admit(id, proof: proof) {
        case .success(let trust):
            let account = Self.account(of: proof, at: address)
            guard
                let refusal = room(
                    for: max(bytes, 0), writing: Hex.bytesPerHexRow, from: account, paired: trust == .paired)
            else { return .admitted }
            let outcome = ReceiveOutcome.noRoom(refusal, account: account)
            return askable && trust != .paired ? .askPerson(outcome) : .refused(outcome)
        case .failure(let refused):
            if case .forged = refused.outcome { return .refused(refused.outcome) }
            return askable ? .askPerson(refused.outcome) : .refused(refused.outcome)
        }
    }

    /// What `admission` says of an offer.
    public enum Admission: Equatable, Sendable {
        case admitted
        /// Refused as `outcome` says, unless its person lets the sender in (pairs it): a key the
        /// accept policy does not take, or one past the budgets strangers have.
        case askPerson(ReceiveOutcome)
        /// Refused, whatever the person says: blocked, forged, or past what even a paired sender has.
        case refused(ReceiveOutcome)
    }

    /// A Store's sender, authenticated, admitted by the policy and not blocked: its trust.
    private mutating func admit(_ sender: String, proof: SenderProof) throws -> Result<SenderTrust, Refused> {
        let trust: SenderTrust
        switch try authenticate(sender, proof: proof) {
        case .known(let known): trust = known
        case .disproved(let reason): return .failure(Refused(outcome: .forged(reason: reason)))
        case .notAdmitted: return .failure(Refused(outcome: refusedByPolicy))
        }
        guard acceptPolicy.admits(trust) else { return .failure(Refused(outcome: refusedByPolicy)) }
        if try isBlocked(anyOf: [sender, proof.deviceID]) { return .failure(Refused(outcome: blockedYou)) }
        return .success(trust)
    }

    /// The outcome of a sender refused before its hex is read.
    private struct Refused: Error {
        let outcome: ReceiveOutcome
    }

    /// Whose share of the budgets a sender's hexes count against: its key's device ID over TLS,
    /// else its address.
    private static func account(of proof: SenderProof, at address: String) -> SenderAccount {
        if case .key(_, let deviceID) = proof { .key(deviceID) } else { .address(address) }
    }

    /// The refusal of a sender the accept policy does not admit, in the words the original app
    /// used for a refusal: an Alert for its user (or the message of an Ack `rejected`).
    private var refusedByPolicy: ReceiveOutcome {
        .rejected(alert: "\(identity.name) accepts hexes only from \(acceptPolicy.admitted).")
    }

    /// The refusal of a blocked sender, in the original app's words.
    private var blockedYou: ReceiveOutcome { .rejected(alert: "\(identity.name) blocked you.") }

    /// Whether any of the IDs a sender goes by (the one its envelope names, the one its key
    /// proves, the one its key is pinned to) is blocked: one rule for Stores and Alerts.
    private func isBlocked(anyOf ids: [String?]) throws -> Bool {
        for id in Set(ids.compactMap { $0 }) where !id.isEmpty {
            if try repository.isBlocked(senderUUID: id) { return true }
        }
        return false
    }

    /// An Alert names no sender; over TLS the key the connection proved does. It is passed on
    /// unless that key's ID (or the peer it is pinned to) is blocked or the policy does not admit
    /// it: `known` and `paired` take Alerts only from a key pinned (or paired, as the policy
    /// requires). A plaintext Alert cannot be tied to a sender, so only the policy `anyone` takes
    /// it, blocked senders or not.
    private mutating func receiveAlert(
        _ envelope: Envelope, proof: SenderProof, from address: String,
        at time: Date
    ) throws -> ReceiveOutcome {
        var pin: PeerPin?
        var sender: String?
        if case .key(let fingerprint, let deviceID) = proof {
            sender = deviceID
            if let owner = try repository.pinnedPeer(forKey: fingerprint) {
                pin = try repository.pin(forPeer: try movedToDerivedID(owner, deviceID: deviceID))
            }
        }
        if try isBlocked(anyOf: [sender, pin?.peerUUID]) { return blockedYou }
        let admitted = acceptPolicy == .anyone || pin.map { acceptPolicy.admits($0.trust) } == true
        guard admitted else { return refusedByPolicy }
        let alert = ReceivedAlert(message: envelope.message ?? "", senderID: sender, address: address, timestamp: time)
        let account: SenderAccount = sender.map(SenderAccount.key) ?? .address(address)
        let bytes = alert.storedBytes
        if let refusal = room(for: bytes, writing: bytes, from: account, paired: pin?.trust == .paired) {
            return .noRoom(refusal, account: account)
        }
        try repository.insertAlert(alert, account: account)
        counted(bytes, writing: bytes, for: account)
        return .alert(alert)
    }

    /// Why `bytes` more from `account` would not fit the inbox's budgets, or `stored` bytes more
    /// in the database the disk's floors (the files that come with a hex are on the downloads
    /// folder's disk, which their carrier checks).
    private func room(for bytes: Int, writing stored: Int, from account: SenderAccount, paired: Bool)
        -> StorageRefusal?
    {
        usage.refusal(ofBytes: bytes, from: account, paired: paired, budget: budget)
            ?? diskRoom.refusal(ofBytes: stored, paired: paired)
    }

    /// Counts `bytes` just stored for `account` in the budgets, `stored` of them in the database.
    private mutating func counted(_ bytes: Int, writing stored: Int, for account: SenderAccount) {
        usage.add(bytes, for: account)
        diskRoom.spend(stored)
    }

    /// How the sender is known, or the outcome for a sender the connection disproves. Over TLS
    /// the sender must be the device ID the proven key derives; that key is pinned to it on first
    /// use when the policy takes anyone. Plaintext never speaks for a derived ID, nor for a UUID
    /// pinned to a key.
    private mutating func authenticate(_ sender: String, proof: SenderProof) throws -> Authentication {
        switch proof {
        case .key(let fingerprint, let deviceID):
            guard !sender.isEmpty else { return .disproved("a Store over TLS must name its senderUUID (a UUID)") }
            guard sender == deviceID else {
                return .disproved(
                    "senderUUID \(sender) is not the ID of the key this connection proved "
                        + "(\(fingerprint)): that key's ID is \(deviceID)")
            }
            if let pin = try repository.pin(forPeer: sender) {
                guard pin.fingerprint == fingerprint else {
                    return .disproved(
                        "\(sender) is pinned to the certificate \(pin.fingerprint), "
                            + "not to \(fingerprint), "
                            + "which this connection proved")
                }
                return .known(pin.trust)
            }
            if let owner = try repository.pinnedPeer(forKey: fingerprint) {
                let moved = try movedToDerivedID(owner, deviceID: deviceID)
                guard moved == deviceID, let pin = try repository.pin(forPeer: moved) else {
                    return .disproved("the key \(fingerprint) belongs to the peer \(owner), not to \(sender)")
                }
                return .known(pin.trust)
            }
            // A stranger is pinned only where strangers are welcome.
            guard acceptPolicy == .anyone else { return .notAdmitted }
            try repository.setPin(PeerPin(peerUUID: sender, fingerprint: fingerprint, trust: .pinned))
            return .known(.new)
        case .none:
            if knowsDerivedIDs && sender.isKeyDerivedID {
                return .disproved(
                    "\(sender) is a device ID derived from a key; "
                        + "only TLS proving that key speaks for it, "
                        + "never a plaintext envelope")
            }
            if !sender.isEmpty, let pin = try repository.pin(forPeer: sender) {
                return .disproved(
                    "\(sender) is known by its key \(pin.fingerprint); a plaintext envelope cannot speak for it")
            }
            return .known(.plaintext)
        }
    }

    /// The peer a pinned key speaks for now: a key pinned before device IDs came from keys (to a
    /// UUID of its peer's choosing) moves, with its trust, block and outbox, to the ID it derives
    /// the first time it proves itself (Protocol.md, section 12.1). Returns `owner` when it is a
    /// derived ID already.
    private mutating func movedToDerivedID(_ owner: String, deviceID: String) throws -> String {
        // The store matches IDs in any case: the same ID in another spelling is no move.
        guard owner.uppercased() != deviceID.uppercased(), !owner.isKeyDerivedID else { return owner }
        try repository.movePeer(from: owner, to: deviceID)
        try pairingsChanged()
        return deviceID
    }

    private enum Authentication {
        case known(SenderTrust)
        case disproved(String)
        /// A key met for the first time, which the policy does not take.
        case notAdmitted
    }

    /// The stored form of a HexJM: a new id, the given location and time, and every missing field
    /// filled with its default (empty strings, no links). Values are kept as received, including
    /// services this version does not know.
    public static func makeHex(from hexJM: HexJM, location: HexLocation, at time: Date) -> Hex {
        // One seed from the system for all the hex's ids (two system calls a UUID otherwise): they
        // must differ from every other id, not be unguessable.
        var ids = SeededRandomGenerator()
        return Hex(
            id: .random(using: &ids),
            location: location,
            senderUUID: hexJM.senderUUID.flatMap(\.canonicalSenderID) ?? "",
            senderName: hexJM.senderName ?? "",
            hexDescription: hexJM.hexDescription ?? "",
            hexColor: hexJM.hexColor ?? "",
            links: (hexJM.links ?? []).map { linkJM in
                Link(
                    id: .random(using: &ids), url: linkJM.url ?? "", linkDescription: linkJM.linkDescription ?? "",
                    service: linkJM.service ?? "")
            },
            timestamp: time,
            isChecked: location != .inbox
        )
    }

    // MARK: Inbox

    /// The inbox, newest first.
    public func inbox() throws -> [Hex] { try repository.hexes(in: .inbox) }

    /// One page of a location's hexes without their links (see `HexRepository.summaries`).
    /// - Throws: `HexManagerError.hexNotFound` when `cursor` is not a hex of the location.
    public func summaries(in location: HexLocation, after cursor: UUID?, limit: Int, fieldCharacters: Int) throws
        -> [HexSummary]
    {
        guard
            let page = try repository.summaries(
                in: location, after: cursor, limit: limit, fieldCharacters: fieldCharacters)
        else {
            throw HexManagerError.hexNotFound(cursor ?? UUID(), in: location)
        }
        return page
    }

    /// How many hexes each location holds, and how many inbox hexes the user has not checked.
    public func counts() throws -> HexCounts { try repository.counts() }

    /// Marks an inbox hex as seen.
    public func markChecked(id: UUID) throws {
        guard try repository.markChecked(id: id) else { throw HexManagerError.hexNotFound(id, in: .inbox) }
    }

    /// Saves a copy of an inbox hex on top of My Hexlist. The copy has new ids and keeps the
    /// original sender; the inbox hex stays where it is.
    @discardableResult
    public func saveToMyHexlist(id: UUID, at time: Date = Date()) throws -> Hex {
        guard let original = try repository.hex(id: id), original.location == .inbox else {
            throw HexManagerError.hexNotFound(id, in: .inbox)
        }
        var copy = original
        copy.id = .random()
        copy.location = .myHexlist
        copy.timestamp = time
        copy.isChecked = true
        copy.links = original.links.map { Link(url: $0.url, linkDescription: $0.linkDescription, service: $0.service) }
        _ = try repository.insert(copy, messageID: nil)
        return copy
    }

    // MARK: My Hexlist

    /// My Hexlist in the user's order.
    public func myHexlist() throws -> [Hex] { try repository.hexes(in: .myHexlist) }

    /// A hex of the user's own, from this daemon's identity, not stored (for a one-off send).
    /// - Throws: `HexManagerError.invalidColor` unless `color` is `#RRGGBB` (kept uppercase).
    public func ownHex(description: String, color: String = HexColor.fallback, links: [Link], at time: Date = Date())
        throws -> Hex
    {
        try Self.ownHex(description: description, color: color, links: links, from: identity, at: time)
    }

    /// A hex of the user of `identity` (see `ownHex`), built without the store: a pure value.
    public static func ownHex(
        description: String, color: String = HexColor.fallback, links: [Link], from identity: LocalIdentity,
        at time: Date = Date()
    ) throws -> Hex {
        guard let normalizedColor = HexColor.normalized(color) else { throw HexManagerError.invalidColor(color) }
        return Hex(
            location: .myHexlist, senderUUID: identity.uuid, senderName: identity.name,
            hexDescription: description, hexColor: normalizedColor, links: links, timestamp: time, isChecked: true)
    }

    /// Creates a hex of the user's own (see `ownHex`) on top of My Hexlist.
    @discardableResult
    public func createHex(description: String, color: String = HexColor.fallback, links: [Link], at time: Date = Date())
        throws -> Hex
    {
        let hex = try ownHex(description: description, color: color, links: links, at: time)
        _ = try repository.insert(hex, messageID: nil)
        return hex
    }

    /// Moves a My Hexlist hex to `index` (0 is the top; past the end means the bottom).
    public func moveInHexlist(id: UUID, to index: Int) throws {
        guard try repository.moveInHexlist(id: id, to: index) else {
            throw HexManagerError.hexNotFound(id, in: .myHexlist)
        }
    }

    // MARK: Any location

    /// The hex with this id, wherever it is.
    public func hex(id: UUID) throws -> Hex {
        guard let hex = try repository.hex(id: id) else { throw HexManagerError.hexNotFound(id, in: nil) }
        return hex
    }

    /// The ids of the hexes whose id starts with `prefix` (any case), in `location` or anywhere,
    /// at most `limit`.
    public func hexIDs(idPrefix prefix: String, in location: HexLocation?, limit: Int) throws -> [UUID] {
        try repository.hexIDs(idPrefix: prefix, in: location, limit: limit)
    }

    /// Deletes a hex from the inbox or My Hexlist; an inbox hex gives its bytes back to its
    /// sender's share of the budgets.
    public mutating func delete(id: UUID) throws {
        let charge = try repository.inboxCharge(ofHex: id)
        guard try repository.delete(id: id) else { throw HexManagerError.hexNotFound(id, in: nil) }
        if let charge { usage.add(-charge.bytes, for: charge.account) }
    }

    // MARK: Alerts

    /// The kept Alerts, newest first (see `HexRepository.alerts`).
    /// - Throws: `HexManagerError.alertNotFound` when `cursor` is not a kept Alert.
    public func alerts(after cursor: UUID?, limit: Int) throws -> [ReceivedAlert] {
        guard let page = try repository.alerts(after: cursor, limit: limit) else {
            throw HexManagerError.alertNotFound(cursor ?? UUID())
        }
        return page
    }

    /// The ids of the kept Alerts whose id starts with `prefix` (any case), at most `limit`.
    public func alertIDs(idPrefix prefix: String, limit: Int) throws -> [UUID] {
        try repository.alertIDs(idPrefix: prefix, limit: limit)
    }

    /// Deletes a kept Alert and returns it; its bytes go back to its sender's share of the budgets.
    @discardableResult
    public mutating func deleteAlert(id: UUID) throws -> ReceivedAlert {
        guard let deleted = try repository.deleteAlert(id: id) else { throw HexManagerError.alertNotFound(id) }
        usage.add(-deleted.bytes, for: deleted.account)
        return deleted.alert
    }

    // MARK: Block list

    /// Refuses future Stores from this sender UUID, and Alerts from the key pinned to it. Returns
    /// false if it was blocked already.
    @discardableResult
    public func block(senderUUID: String) throws -> Bool { try repository.setBlocked(true, senderUUID: senderUUID) }

    /// Accepts Stores and Alerts from this sender UUID again. Returns false if it was not blocked.
    @discardableResult
    public func unblock(senderUUID: String) throws -> Bool { try repository.setBlocked(false, senderUUID: senderUUID) }

    /// The blocked sender UUIDs, uppercase, sorted.
    public func blockedSenders() throws -> [String] { try repository.blockedSenders() }
}
