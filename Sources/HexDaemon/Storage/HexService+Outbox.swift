import HexCarrier
import HexKit
import HexStore

/// The outbox table, on the store's thread (`Outbox` decides what is done with it).
extension HexService {
    /// Adds `entry` unless one with its id is there, within the outbox's bounds; returns the
    /// entry the outbox holds for that id, and whether it is the one given.
    /// - Throws: `OutboxError.full` when `entry` is new and would not fit, or a store error.
    func enqueue(_ entry: OutboxEntry, capacity: OutboxUsage) throws -> (entry: OutboxEntry, isNew: Bool) {
        if let existing = try database.outboxEntry(messageID: entry.messageID) { return (existing, false) }
        let usage = try database.outboxUsage()
        guard usage.entries < capacity.entries, usage.bytes + entry.envelope.utf8.count <= capacity.bytes else {
            throw OutboxError.full(usage: usage, capacity: capacity)
        }
        _ = try database.enqueue(entry)
        return (entry, true)
    }

    func outboxEntry(messageID: String) throws -> OutboxEntry? {
        try database.outboxEntry(messageID: messageID)
    }

    /// The one entry whose id starts with `prefix` (any case).
    /// - Throws: `LookupError` when none or several match.
    func outboxEntry(matching prefix: String) throws -> OutboxEntry {
        let matches = prefix.isEmpty ? [] : try database.outboxEntries(idPrefix: prefix, limit: 2)
        guard let match = matches.first else { throw LookupError.noOutboxEntry(prefix) }
        guard matches.count == 1 else { throw LookupError.ambiguousOutboxEntry(prefix) }
        return match
    }

    func dueOutboxEntries(at time: Date, limit: Int) throws -> [OutboxEntry] {
        try database.dueOutboxEntries(at: time, limit: limit)
    }

    func outboxEntries(after cursor: String?, limit: Int) throws -> [OutboxEntry] {
        try database.outboxEntries(after: cursor, limit: limit)
    }

    func nextOutboxAttempt() throws -> Date? {
        try database.nextOutboxAttempt()
    }

    func outboxUsage() throws -> OutboxUsage {
        try database.outboxUsage()
    }

    func recordFailedAttempt(messageID: String, error: String, nextAttemptAt: Date) throws {
        try database.recordFailedAttempt(messageID: messageID, error: error, nextAttemptAt: nextAttemptAt)
    }

    func scheduleOutbox(messageID: String, at time: Date) throws {
        try database.scheduleOutbox(messageID: messageID, at: time)
    }

    /// Makes the entries for `peerUUID` (every entry, when nil) due at `time`; returns how many were later.
    func makeOutboxDue(peerUUID: String?, at time: Date) throws -> Int {
        try database.makeOutboxDue(peerUUID: peerUUID, at: time)
    }

    @discardableResult
    func removeFromOutbox(messageID: String) throws -> Bool {
        try database.removeFromOutbox(messageID: messageID)
    }

    /// Keeps what a delivery settled, in one call: the send leaves the outbox (when it was
    /// queued), and the key it proved is pinned or its pin moved. The key is kept even when the
    /// outbox fails, and the other way round: each is worth keeping alone.
    /// - Throws: the first store error.
    func settleDelivery(of messageID: String?, keyProof: KeyProof?) throws {
        var failure: (any Error)?
        do {
            switch keyProof {
            case .firstUse(let peer, let fingerprint): try pinOnFirstUse(peer: peer, fingerprint: fingerprint)
            case .moved(let owner, let peer): try movePeer(from: owner, to: peer)
            case nil: break
            }
        } catch {
            failure = error
        }
        if let messageID { _ = try database.removeFromOutbox(messageID: messageID) }
        if let failure { throw failure }
    }
}

/// Why a send was not queued.
enum OutboxError: Error, Equatable, CustomStringConvertible {
    /// The outbox holds as many entries, or envelope bytes, as it may.
    case full(usage: OutboxUsage, capacity: OutboxUsage)
    /// The client chose a message id queued already for a different send.
    case messageIDTaken(String)

    var description: String {
        switch self {
        case .full(let usage, let capacity):
            "the outbox is full (\(usage.entries) sends, \(usage.bytes) bytes waiting; "
                + "at most \(capacity.entries) and \(capacity.bytes) bytes): "
                + "wait for deliveries, or cancel some with hexctl outbox cancel"
        case .messageIDTaken(let id):
            "message id \(id) is already queued for another send (another peer or other content)"
        }
    }
}
