import HexCarrier
import HexEngine
import HexKit
import HexNet
import HexStore

/// Sends hexes and alerts so that each arrives once or its user learns why it cannot.
///
/// A send is committed to the outbox table, with the `messageID` it keeps on every attempt,
/// before anything goes on the wire; it leaves the table when its peer acks it (`stored`,
/// `duplicate`, or `received` for an alert), when the peer refuses it for good, when it expires,
/// or when the user cancels it. A failure worth retrying (the peer away, no answer, a lost
/// connection, Ack `failed`) schedules another attempt with backoff and jitter; a beacon from the
/// peer, or a restart of this daemon, makes it due at once. The receiver's duplicate detection
/// turns these retries into exactly-once delivery (Protocol.md, "Outbox").
actor Outbox: DaemonService {
    /// What is sent.
    enum Payload: Sendable {
        case hex(Hex)
        case alert(String)
    }

    /// How one attempt ended.
    enum Attempt: Sendable {
        case delivered(CarrierReceipt)
        /// Not delivered this time; tried again at `next` (or at a beacon from the peer).
        case retrying(reason: String, next: Date)
        /// Given up: the peer refused it, or it expired.
        case failed(reason: String)
        /// No longer in the outbox (delivered, failed or cancelled meanwhile).
        case gone
        /// Still under way when its caller's wait ended (a LocalSend device's person has not
        /// answered yet); it goes on in the background.
        case underWay(String)
    }

    /// At most this many sends, and this many envelope bytes, wait at once.
    static let capacity = OutboxUsage(entries: 10_000, bytes: 256 << 20)
    /// How long an attempt the user is not waiting for may take.
    static let backgroundTimeout = Duration.seconds(30)
    /// Entries taken per round, and peers delivered to at once.
    static let batchSize = 64
    static let concurrentPeers = 8
    /// The longest the delivery loop sleeps without looking at the table, while it holds sends.
    static let longestNap = Duration.seconds(60)
    /// How late a retry may be, so that the system can serve it with another wake-up.
    static let napTolerance = Duration.milliseconds(250)

    private let store: HexService
    private let sender: SendService
    private let events: EventLog
    private let logger: Logger
    private let wire: WireSettings
    /// How long an undelivered send stays before it is given up.
    private let lifetime: Duration
    /// Which sends are under way and who waits for them, which go in which order, and when.
    private var machine: OutboxMachine
    /// The callers waiting for an attempt another caller started.
    private var waiters: [OutboxMachine.Waiter: CheckedContinuation<Attempt, Never>] = [:]
    /// The sleeping delivery loop, woken by `wake`.
    private var alarm: CheckedContinuation<Void, Never>?
    /// `wake` was called while the loop was not asleep: its next nap is skipped.
    private var woken = false

    init(
        store: HexService, sender: SendService, events: EventLog, wire: WireSettings, lifetime: Duration,
        logger: Logger,
        schedule: RetrySchedule = RetrySchedule()
    ) {
        self.store = store
        self.sender = sender
        self.events = events
        self.wire = wire
        self.lifetime = lifetime
        self.logger = logger
        machine = OutboxMachine(schedule: schedule)
    }

    // MARK: Sending

    /// Commits a send to the outbox, due at once, unless `messageID` is queued already (a client
    /// repeating a send it is unsure of), in which case that entry is returned. The delivery loop
    /// attempts it.
    /// - Throws: `LookupError` when `peer` names no peer, `SendError.refused` for a send this
    ///   daemon will never make, `OutboxError`, or a store error.
    func enqueue(_ payload: Payload, to peer: String, messageID: UUID, forceLegacy: Bool) async throws -> OutboxEntry {
        let target = try await sender.target(peer)
        _ = try await sender.plan(target, forceLegacy: forceLegacy)
        let envelope = envelope(payload, messageID: messageID)
        let entry = try await commit(envelope, line: envelope.encodedLine(), to: target, forceLegacy: forceLegacy)
        wake()
        return entry
    }

    /// A send committed for its user to wait for (`hexctl send --wait`), reserved for its first
    /// attempt: pass it to `attempt(_:timeout:)`, or to `release` when the attempt will not be made.
    struct Held: Sendable {
        let entry: OutboxEntry
        fileprivate let envelope: Envelope
        /// The envelope as encoded for the table, written as it is to the peer.
        fileprivate let line: [UInt8]
        fileprivate let plan: SendPlan?
        /// Whether the reservation is this caller's: false when the same send was under way already.
        fileprivate let isReserved: Bool
    }

    /// Commits a send to the outbox (see `enqueue`) for its user to wait for. The peer is found
    /// once and the send planned once by its carrier; reserved before the commit, the send cannot be started
    /// by anyone else until `attempt` makes its first attempt, with the entry and envelope as
    /// committed, not read back.
    /// - Throws: what `enqueue` throws.
    func hold(_ payload: Payload, to peer: String, messageID: UUID, forceLegacy: Bool) async throws -> Held {
        let target = try await sender.target(peer)
        let plan = try await sender.plan(target, forceLegacy: forceLegacy)
        let envelope = envelope(payload, messageID: messageID)
        let line = envelope.encodedLine()
        // Under way already (the same send repeated), or settled in this round: `attempt` then
        // waits for that attempt, or reads what is left of it.
        let isReserved = machine.reserve(messageID.uuidString)
        do {
            let entry = try await commit(envelope, line: line, to: target, forceLegacy: forceLegacy)
            return Held(entry: entry, envelope: envelope, line: line, plan: plan, isReserved: isReserved)
        } catch {
            if isReserved { release(messageID.uuidString) }
            throw error
        }
    }

    /// The first attempt at a held send, and how it ended.
    func attempt(_ held: Held, timeout: Duration) async -> Attempt {
        guard held.isReserved else { return await attempt(held.entry.messageID, timeout: timeout) }
        return await run(
            held.entry, timeout: timeout,
            prepared: Prepared(envelope: held.envelope, line: held.line, plan: held.plan))
    }

    /// Makes the attempt at a reserved entry, and ends it. An attempt that may take longer than
    /// its caller waits (`SendService.attemptTimeout`) runs in a task of its own: the caller gets
    /// its outcome, or `underWay` after `timeout`.
    private func run(_ entry: OutboxEntry, timeout: Duration, prepared: Prepared?) async -> Attempt {
        // Cancelled since it was reserved (held for its user, or read): nothing goes out.
        guard !machine.isWithdrawing(entry.messageID) else {
            finish(entry.messageID, .gone)
            return .gone
        }
        let own = sender.attemptTimeout(toPeer: entry.peerUUID, asked: timeout)
        // Reserved, the entry has an attempt under way: the request waits for it.
        guard own > timeout, case .wait(let waiter) = machine.request(entry.messageID) else {
            let outcome = await settle(entry, timeout: own, prepared: prepared)
            finish(entry.messageID, outcome)
            return outcome
        }
        Task {
            let outcome = await self.settle(entry, timeout: own, prepared: prepared)
            self.finish(entry.messageID, outcome)
            // The delivery loop may wait for this attempt's end to look at the table again.
            self.wake()
        }
        return await wait(
            waiter, atMost: timeout, saying: "\(entry.label) has not answered yet (its person may be looking at it)")
    }

    /// The outcome of the attempt `waiter` waits for, or `underWay` with `reason` after `limit`.
    private func wait(_ waiter: OutboxMachine.Waiter, atMost limit: Duration, saying reason: String) async -> Attempt {
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            self.waiters.removeValue(forKey: waiter)?.resume(returning: .underWay(reason))
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { waiters[waiter] = $0 }
    }

    /// Gives a held send back to the delivery loop, unattempted (its user left).
    func release(_ held: Held) {
        if held.isReserved { release(held.entry.messageID) }
    }

    /// Gives a reserved send back to the delivery loop: a caller that came to wait for it
    /// meanwhile learns it is still queued.
    private func release(_ messageID: String) {
        finish(messageID, .retrying(reason: "its first attempt did not start", next: Date()))
        wake()
    }

    /// Writes a send to the outbox table (see `enqueue`), and says so.
    private func commit(_ envelope: Envelope, line: [UInt8], to target: CarrierTarget, forceLegacy: Bool)
        async throws -> OutboxEntry
    {
        let now = Date()
        let kind: OutboxEntry.Kind = envelope.operationType == .alert ? .alert : .hex
        let messageID = envelope.messageID ?? ""
        let entry = OutboxEntry(
            messageID: messageID, peerUUID: target.peerID, address: target.address?.description,
            label: target.label, kind: kind, envelope: String(decoding: line, as: UTF8.self),
            legacy: forceLegacy, createdAt: now, expiresAt: now + lifetime.inSeconds,
            nextAttemptAt: now)
        let (queued, isNew) = try await store.enqueue(entry, capacity: Self.capacity)
        guard isNew else {
            guard queued.envelope == entry.envelope, queued.peerUUID == entry.peerUUID, queued.address == entry.address
            else {
                throw OutboxError.messageIDTaken(messageID)
            }
            return queued
        }
        logger.info(
            "queued \(envelope.operationType) \(messageID) for \(target.label)",
            [("peer", target.label), ("messageID", messageID)])
        await events.publish(
            .sendQueued, peerUUID: target.peerID, peer: target.label, id: messageID,
            message: "expires \(entry.expiresAt.formatted(.iso8601))")
        return queued
    }

    /// Attempts a queued send now, or waits for the attempt under way, and returns how it ended.
    func attempt(_ messageID: String, timeout: Duration) async -> Attempt {
        switch machine.request(messageID) {
        case .wait(let waiter):
            return await wait(waiter, atMost: timeout, saying: "the attempt under way has not ended yet")
        case .withdrawn:
            return .gone
        case .attempt:
            break
        }
        // Reserved: nobody else attempts it until `finish`, whatever happens while the store reads.
        let outcome: Attempt
        do {
            if let entry = try await store.outboxEntry(messageID: messageID) {
                return await run(entry, timeout: timeout, prepared: nil)
            }
            outcome = .gone
        } catch {
            logger.error("the outbox's store failed: \(error)")
            outcome = .retrying(reason: "cannot read the outbox: \(error)", next: Date())
        }
        finish(messageID, outcome)
        return outcome
    }

    /// Sends once, without the outbox (`--no-queue`): the outcome is reported and forgotten.
    /// - Throws: `LookupError`, or `SendError`.
    func sendOnce(
        _ payload: Payload, to peer: String, messageID: UUID, forceLegacy: Bool, wait: Bool, timeout: Duration
    ) async throws -> CarrierReceipt {
        let target = try await sender.target(peer)
        let envelope = envelope(payload, messageID: messageID)
        do {
            let receipt = try await sender.deliver(
                CarrierSend(envelope, to: target, legacy: forceLegacy, wait: wait, timeout: timeout))
            if receipt.keyProof != nil { await keep(receipt, settling: nil) }
            await events.publish(
                .sendAcked, peerUUID: target.peerID, peer: target.label, id: receipt.messageID,
                message: receipt.delivery.status?.rawValue ?? "sent")
            return receipt
        } catch {
            logger.warning(
                "\(envelope.operationType) to \(target.label) failed: \(error)",
                [("peer", target.label), ("messageID", messageID.uuidString)])
            await events.publish(
                .sendFailed, peerUUID: target.peerID, peer: target.label, id: messageID.uuidString,
                message: error.description)
            throw error
        }
    }

    // MARK: The user's hand

    /// A page of the outbox, soonest next attempt first.
    func entries(after cursor: String?, limit: Int) async throws -> [OutboxEntry] {
        try await store.outboxEntries(after: cursor, limit: limit)
    }

    /// Makes the entry whose id is or starts with `prefix` due, and attempts it now.
    /// - Throws: `LookupError`, or a store error.
    func retry(_ prefix: String, timeout: Duration) async throws -> (OutboxEntry, Attempt) {
        let entry = try await store.outboxEntry(matching: prefix)
        try await store.scheduleOutbox(messageID: entry.messageID, at: Date())
        return (entry, await attempt(entry.messageID, timeout: timeout))
    }

    /// Removes the entry whose id is or starts with `prefix`. No attempt at it starts from now,
    /// even in a round that read it before; one already under way may still deliver it.
    /// - Throws: `LookupError`, or a store error.
    func cancel(_ prefix: String) async throws -> OutboxEntry {
        let entry = try await store.outboxEntry(matching: prefix)
        let underWay = machine.cancelStarts(entry.messageID)
        defer { machine.cancelEnds(entry.messageID) }
        guard try await store.removeFromOutbox(messageID: entry.messageID) else {
            throw LookupError.noOutboxEntry(prefix)
        }
        logger.info(
            "cancelled \(entry.messageID) for \(entry.label)"
                + (underWay ? " (the attempt under way may still deliver it)" : ""),
            [("peer", entry.label), ("messageID", entry.messageID)])
        await events.publish(
            .sendFailed, peerUUID: entry.peerUUID, peer: entry.label, id: entry.messageID, message: "cancelled")
        return entry
    }

    // MARK: Delivering

    /// Delivers due sends until cancelled: every entry once at start (nothing is under way after a
    /// restart), then each as it falls due, or at once for a peer whose beacon was heard.
    func run() async {
        _ = await logged { try await store.makeOutboxDue(peerUUID: nil, at: Date()) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followArrivals() }
            group.addTask { await self.deliveryLoop() }
            await group.waitForAll()
        }
    }

    /// Wakes the delivery loop: something may have become due.
    func wake() {
        woken = true
        alarm?.resume()
        alarm = nil
    }

    private func deliveryLoop() async {
        while !Task.isCancelled {
            // Due sends none of which could go (each under way elsewhere) stay due: the loop waits for
            // a wake-up (an attempt or a lane that ends), not for their time, which has come.
            let next: Date? =
                if await deliverDue() {
                    Date() + Self.longestNap.inSeconds
                } else {
                    await logged { try await store.nextOutboxAttempt() } ?? nil
                }
            await nap(until: next)
        }
    }

    /// Makes a peer's sends due when the peer directory says it is (back) on the network.
    private func followArrivals() async {
        for await uuid in await sender.directory.arrivals() {
            guard let due = await logged({ try await store.makeOutboxDue(peerUUID: uuid, at: Date()) }), due > 0
            else { continue }
            wake()
        }
    }

    /// One round: the due entries, each destination's in order, several destinations at once.
    /// - Returns: whether sends were due but none could go (each under way elsewhere).
    private func deliverDue() async -> Bool {
        machine.roundStarts()
        defer { machine.roundEnds() }
        guard let due = await logged({ try await store.dueOutboxEntries(at: Date(), limit: Self.batchSize) }) else {
            return false
        }
        let lanes = machine.lanes(of: due)
        var started = 0
        await withTaskGroup(of: Void.self) { group in
            for lane in lanes {
                // A lane whose attempts may wait minutes for a person (a LocalSend device's) goes on
                // by itself: the round, and every other destination's sends, do not wait for it.
                if sender.attemptTimeout(toPeer: lane.destination, asked: Self.backgroundTimeout)
                    > Self.backgroundTimeout
                {
                    await outlive(lane)
                    continue
                }
                if started >= Self.concurrentPeers { await group.next() }
                started += 1
                group.addTask { await self.deliverInOrder(lane) }
            }
        }
        return !due.isEmpty && lanes.isEmpty
    }

    /// Lets `lane` go on apart from its round. Its sends are put off in the table for as long as
    /// an attempt may wait, so that later rounds do not read them again (they would find them
    /// under way, and read them over and over); each is read afresh before it is attempted (the
    /// user may have cancelled it meanwhile).
    private func outlive(_ lane: OutboxMachine.Lane<OutboxEntry>) async {
        machine.laneOutlivesRound(lane.destination)
        let later = Date() + sender.attemptTimeout(toPeer: lane.destination, asked: Self.backgroundTimeout).inSeconds
        for entry in lane.remaining {
            await logged { try await store.scheduleOutbox(messageID: entry.messageID, at: later) }
        }
        Task {
            await self.deliverInOrder(lane, readingAfresh: true)
            self.machine.outlivingLaneEnded(lane.destination)
            self.wake()
        }
    }

    /// Delivers one destination's entries in order; once one must wait, the rest wait as long.
    /// - Parameter readingAfresh: read each entry again before its attempt (a lane that outlives
    ///   its round).
    private func deliverInOrder(_ lane: OutboxMachine.Lane<OutboxEntry>, readingAfresh: Bool = false) async {
        var lane = lane
        while let read = lane.next(reservingIn: &machine) {
            var entry = read
            if readingAfresh {
                guard let fresh = await logged({ try await store.outboxEntry(messageID: read.messageID) }) ?? nil else {
                    finish(read.messageID, .gone)
                    continue
                }
                entry = fresh
            }
            let timeout = sender.attemptTimeout(toPeer: entry.peerUUID, asked: Self.backgroundTimeout)
            let outcome = await settle(entry, timeout: timeout)
            finish(entry.messageID, outcome)
            guard case .retrying(_, let next) = outcome else { continue }
            for later in lane.postpone() {
                await logged { try await store.scheduleOutbox(messageID: later.messageID, at: next) }
            }
        }
    }

    /// Ends the attempt at `messageID`: hands its outcome to whoever waits for it.
    private func finish(_ messageID: String, _ outcome: Attempt) {
        for waiter in machine.finished(messageID) { waiters.removeValue(forKey: waiter)?.resume(returning: outcome) }
    }

    /// What the first attempt at a send takes from its commit instead of reading it back.
    private struct Prepared: Sendable {
        var envelope: Envelope
        var line: [UInt8]
        /// What the carrier's plan found before the commit; nil when it found nothing to hand on.
        var plan: SendPlan?
    }

    /// One attempt at a reserved entry, its outcome recorded and announced.
    /// - Parameter prepared: what the commit had, for the first attempt; later ones read the
    ///   envelope from the entry and find the peer afresh.
    private func settle(_ entry: OutboxEntry, timeout: Duration, prepared: Prepared? = nil) async -> Attempt {
        let now = Date()
        let decision = machine.decide(
            expiresAt: entry.expiresAt, attempts: entry.attempts, lastError: entry.lastError,
            now: now)
        if case .giveUp(let reason) = decision { return await giveUp(entry, reason: reason) }
        let envelope: Envelope
        if let prepared {
            envelope = prepared.envelope
        } else {
            do {
                envelope = try stored(entry)
            } catch {
                return await giveUp(entry, reason: "the outbox holds it damaged: \(error)")
            }
        }
        do throws(SendError) {
            let target = CarrierTarget(
                peerID: entry.peerUUID, address: entry.address.flatMap(Endpoint.init(parsing:)), label: entry.label)
            let receipt = try await sender.deliver(
                CarrierSend(
                    envelope, encoded: prepared?.line, to: target, legacy: entry.legacy, timeout: timeout,
                    plan: prepared?.plan))
            await keep(receipt, settling: entry.messageID)
            await events.publish(
                .sendAcked, peerUUID: entry.peerUUID, peer: receipt.peer, id: entry.messageID,
                message: receipt.delivery.status?.rawValue ?? "sent")
            return .delivered(receipt)
        } catch .refused(let reason) {
            return await giveUp(entry, reason: reason)
        } catch {
            return await retryLater(entry, because: error.description, now: now)
        }
    }

    /// The envelope an entry holds. The outbox holds this daemon's own hexes: they go from its ID
    /// of now, even one queued before the ID came from its key (a receiver refuses any other ID
    /// over TLS).
    /// - Throws: `EnvelopeDecodingError` for an entry the table holds damaged.
    private func stored(_ entry: OutboxEntry) throws(EnvelopeDecodingError) -> Envelope {
        var envelope = try Envelope.decode(from: Array(entry.envelope.utf8), limits: wire.envelopeLimits)
        if var hex = envelope.hex, hex.senderUUID != store.identity.uuid {
            hex.senderUUID = store.identity.uuid
            envelope.jmObject = .hex(hex)
        }
        return envelope
    }

    /// Keeps what a delivery settled, in one store call: the entry leaves the outbox, and the key
    /// the delivery proved is pinned (or its pin moved). Should the store fail to remove the
    /// entry, it is attempted again later: its peer answers `duplicate`, nothing is stored twice.
    private func keep(_ receipt: CarrierReceipt, settling messageID: String?) async {
        do {
            try await store.settleDelivery(of: messageID, keyProof: receipt.keyProof)
        } catch {
            logger.error("cannot keep what the delivery to \(receipt.peer) settled: \(error)")
        }
        if case .moved(let owner, let peer)? = receipt.keyProof {
            logger.info("moved the key pinned to \(owner) to \(peer), the ID it derives")
        }
    }

    /// Records a failed attempt worth retrying and when the next one is due.
    private func retryLater(_ entry: OutboxEntry, because reason: String, now: Date) async -> Attempt {
        let attempts = entry.attempts + 1
        let next = machine.nextAttempt(
            afterAttempts: attempts, jitter: Double.random(in: 0.5...1),
            expiresAt: entry.expiresAt, now: now)
        await logged {
            try await store.recordFailedAttempt(messageID: entry.messageID, error: reason, nextAttemptAt: next)
        }
        logger.info(
            "\(entry.kind.rawValue) \(entry.messageID) for \(entry.label) not delivered "
                + "(attempt \(attempts)): \(reason)",
            [("peer", entry.label), ("messageID", entry.messageID), ("attempts", String(attempts))])
        await events.publish(
            .sendRetrying, peerUUID: entry.peerUUID, peer: entry.label, id: entry.messageID,
            message: "attempt \(attempts): \(reason); next at \(next.formatted(.iso8601))")
        // The delivery loop may be asleep past `next` (an attempt the user waited for).
        wake()
        return .retrying(reason: reason, next: next)
    }

    private func giveUp(_ entry: OutboxEntry, reason: String) async -> Attempt {
        await remove(entry)
        logger.warning(
            "\(entry.kind.rawValue) \(entry.messageID) for \(entry.label) failed: \(reason)",
            [("peer", entry.label), ("messageID", entry.messageID)])
        await events.publish(
            .sendFailed, peerUUID: entry.peerUUID, peer: entry.label, id: entry.messageID, message: reason)
        return .failed(reason: reason)
    }

    /// Removes a settled entry. Should the store fail, the entry is attempted again later: its
    /// peer answers `duplicate`, nothing is stored twice.
    private func remove(_ entry: OutboxEntry) async {
        await logged { try await store.removeFromOutbox(messageID: entry.messageID) }
    }

    /// Runs a store call of the delivery loop; a failure is logged and gives nil. The outbox
    /// carries on: what was not read is read next round, what was not written is attempted again.
    @discardableResult
    private func logged<T>(_ call: () async throws -> T) async -> T? {
        do {
            return try await call()
        } catch {
            logger.error("the outbox's store failed: \(error)")
            return nil
        }
    }

    /// Sleeps until `time` (at most `longestNap`), or until woken or cancelled. With nothing
    /// queued (`time` nil) no timer is armed: only a new send or a peer's return wakes it.
    private func nap(until time: Date?) async {
        guard !woken else {
            woken = false
            return
        }
        let delay = OutboxMachine.nap(until: time, now: Date(), longest: Self.longestNap)
        let timer = delay.map { delay in
            Task {
                guard (try? await Task.sleep(for: delay, tolerance: Self.napTolerance)) != nil else { return }
                self.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { alarm = $0 }
        } onCancel: {
            Task { await self.wake() }
        }
        timer?.cancel()
        woken = false
    }

    /// The envelope of `payload`, written for a current peer.
    private func envelope(_ payload: Payload, messageID: UUID) -> Envelope {
        let dialect = Dialect(.current, versionID: wire.appVersion)
        return switch payload {
        case .hex(let hex): dialect.store(hex, from: store.identity, messageID: messageID)
        case .alert(let message): dialect.alert(message, messageID: messageID)
        }
    }
}

extension OutboxEntry: OutboxItem {
    /// The address the user typed, or else the peer: one lane each.
    public var destination: String { address ?? peerUUID ?? "" }
}
