/// The requests for share links in flight, each a *query wrapper*: a slot per
/// requested path, filled by answers that arrive asynchronously, out of order, possibly twice.
///
/// Every wrapper ends exactly once, through its `deliver` callback, and is removed as it ends:
/// - all slots filled: the links in selection order;
/// - the first failure: that failure; later answers are ignored;
/// - `cancel`: `.cancelled`.
/// Answers for a wrapper that has ended, for a path it does not have, or for a slot already
/// filled (the first answer wins) are ignored. All access is serialised by the actor.
public actor QueryRegistry {
    /// What a query asks for.
    public enum Kind: String, Sendable, Codable {
        /// One share link per file (the only kind so far; the original app also queried folders'
        /// metadata).
        case shareLinks
    }

    /// How a query ended.
    public enum Outcome: Sendable, Equatable {
        /// Every path's answer, in selection order.
        case delivered([String])
        case failed(path: String?, reason: String)
        case cancelled
    }

    /// What became of one answer.
    public enum AnswerResult: Sendable, Equatable {
        case accepted
        /// The answer completed the query: it has been delivered.
        case completed
        case unknownQuery
        case unknownPath
        case slotAlreadyFilled
    }

    /// A query in flight, as `inFlight` lists it.
    public struct Progress: Sendable, Codable, Equatable {
        public let id: UUID
        public let kind: Kind
        public let answered: Int
        public let total: Int
        /// The paths still waiting for an answer, in selection order.
        public let waiting: [String]

        public init(id: UUID, kind: Kind, answered: Int, total: Int, waiting: [String]) {
            self.id = id
            self.kind = kind
            self.answered = answered
            self.total = total
            self.waiting = waiting
        }
    }

    private struct Wrapper {
        let kind: Kind
        /// The selection order, without repeats.
        let order: [String]
        /// The same paths, for checking an answer's path without a scan.
        let paths: Set<String>
        var slots: [String: String]
        let deliver: @Sendable (Outcome) -> Void
    }

    private var wrappers: [UUID: Wrapper] = [:]

    public init() {}

    /// Opens a query for `paths` (a path selected twice is asked for once).
    ///
    /// - Parameters:
    ///   - id: chosen by the caller (a client can then follow its query's progress).
    ///   - deliver: called exactly once, when the query ends; it must not block.
    /// - Returns: false when a query with this id is in flight already, or there is no path
    ///   (nothing is registered and `deliver` is not called).
    public func open(id: UUID, kind: Kind, paths: [String], deliver: @escaping @Sendable (Outcome) -> Void) -> Bool {
        var seen = Set<String>()
        let order = paths.filter { seen.insert($0).inserted }
        guard wrappers[id] == nil, !order.isEmpty else { return false }
        wrappers[id] = Wrapper(kind: kind, order: order, paths: seen, slots: [:], deliver: deliver)
        return true
    }

    /// Records the answer for one path; delivers the bundle when it was the last one missing.
    @discardableResult
    public func answer(_ id: UUID, path: String, link: String) -> AnswerResult {
        // Checked without keeping a copy of the wrapper, so the slot is then filled in place:
        // a copy would make every answer copy all the slots.
        switch wrappers[id].map({ ($0.paths.contains(path), $0.slots[path] == nil) }) {
        case nil: return .unknownQuery
        case (false, _)?: return .unknownPath
        case (true, false)?: return .slotAlreadyFilled
        case (true, true)?: wrappers[id]?.slots[path] = link
        }
        guard let wrapper = wrappers[id], wrapper.slots.count == wrapper.order.count else { return .accepted }
        end(id, with: .delivered(wrapper.order.compactMap { wrapper.slots[$0] }))
        return .completed
    }

    /// Ends the query with a failure (the first one wins; a query that ended already is left as it is).
    /// - Returns: whether this call ended the query.
    @discardableResult
    public func fail(_ id: UUID, path: String?, reason: String) -> Bool {
        guard wrappers[id] != nil else { return false }
        end(id, with: .failed(path: path, reason: reason))
        return true
    }

    /// Ends the query as cancelled. Returns false when it is not in flight.
    @discardableResult
    public func cancel(_ id: UUID) -> Bool {
        guard wrappers[id] != nil else { return false }
        end(id, with: .cancelled)
        return true
    }

    /// The queries in flight with their progress.
    public var inFlight: [Progress] {
        wrappers.keys.sorted { $0.uuidString < $1.uuidString }.compactMap(progress(of:))
    }

    /// How many paths of a query in flight have their answer (cheaper than `progress(of:)`).
    public func answeredCount(of id: UUID) -> Int? { wrappers[id]?.slots.count }

    /// The progress of one query, if it is in flight.
    public func progress(of id: UUID) -> Progress? {
        wrappers[id].map { wrapper in
            Progress(
                id: id, kind: wrapper.kind, answered: wrapper.slots.count, total: wrapper.order.count,
                waiting: wrapper.order.filter { wrapper.slots[$0] == nil })
        }
    }

    /// Removes the wrapper first, so nothing can end it twice, then delivers.
    private func end(_ id: UUID, with outcome: Outcome) {
        guard let wrapper = wrappers.removeValue(forKey: id) else { return }
        wrapper.deliver(outcome)
    }
}
