import HexKit

/// The decisions of hexd's mDNS responder and DNS-SD browser (RFC 6762, 6763), without sockets
/// or records: when to probe for the instance name, announce it, query for peers; what to do on a
/// conflict (take the next name, "Ada (2)", with the rate limit of section 8.1), on a
/// simultaneous probe (defer a second when the other's records win, section 8.2; `ProbeTieBreak`
/// in HexDNS says who wins), on another browser's query (counted as this one's own, section
/// 7.3), and how a question is answered (multicast at most once a second per name, section 6;
/// unicast within a budget, since a spoofed source would receive it).
///
/// The driver passes the time in, performs the actions, and waits until `deadline`.
public struct MDNSResponder: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// What the driver sends or does.
    public enum Action: Sendable, Equatable {
        /// A probe for the instance and host names: questions of type ANY, the records in the
        /// authority section; the first asks for unicast answers.
        case probe(unicastResponse: Bool)
        /// Every record, announced; the first announcement of a name is worth logging.
        case announce(first: Bool)
        /// A browse query for the service, with the known answers.
        case query
        /// Another responder holds the name: publish as `name` instead (then probe for it).
        case rename(to: String)
        /// Names were taken `maximumRenames` times (a responder claiming every name it hears):
        /// publishing stops, and is worth saying.
        case giveUp
    }

    /// How to answer a question this daemon has answers to.
    public enum Reply: Sendable, Equatable {
        case multicast
        /// To the asker alone, at port 5353: every question asked for a unicast answer.
        case unicast
        /// To the asker's own port, with its id and questions echoed (section 6.7).
        case legacyUnicast
        /// Not now: not published, answered within the last second, or past the unicast budget.
        case none
    }

    private enum Phase: Sendable, Equatable {
        case silent
        case probing(sent: Int)
        case announcing(sent: Int)
        case published
        case gaveUp
    }

    public static let maximumRenames = 32
    static let probeSpacing: Duration = .milliseconds(250)
    /// Conflicts past which each new probe waits `slowProbe` (section 8.1: fifteen in ten seconds).
    static let conflictBurst = 15
    static let conflictWindow: Duration = .seconds(10)
    static let slowProbe: Duration = .seconds(5)
    static let longestQueryGap: Duration = .seconds(60)
    /// Questions remembered for the once-a-second rule; past it the memory starts over.
    static let answeredNamesKept = 64

    /// The name the user gave, before any " (2)".
    public let baseName: String
    /// The name published (or probed for) now.
    public private(set) var instanceName: String
    public private(set) var renames = 0
    private var phase = Phase.silent
    private var publishingDue: Instant?
    private var query: (due: Instant, gap: Duration)?
    private var recentConflicts: [Instant] = []
    private var lastAnswered: [String: Instant] = [:]
    private var unicastReplies = TokenBucket(rate: 20, burst: 20)

    public init(name: String) {
        baseName = name
        instanceName = name
    }

    /// Whether the name is announced and defended.
    public var isPublished: Bool {
        switch phase {
        case .published: true
        case .announcing(let sent): sent > 0
        case .silent, .probing, .gaveUp: false
        }
    }

    /// Whether it probes for the name now.
    public var isProbing: Bool {
        if case .probing = phase { return true }
        return false
    }

    /// Whether a name is held or being claimed (a conflict then matters).
    public var claimsName: Bool {
        switch phase {
        case .probing, .announcing, .published: true
        case .silent, .gaveUp: false
        }
    }

    /// When the next probe, announcement or query is due; nil while silent.
    public var deadline: Instant? {
        [publishingDue, query?.due].compactMap { $0 }.min()
    }

    /// Starts probing and browsing after the delays given (section 8.1 asks for a random one, so
    /// that hosts started together do not probe in step), unless it already does.
    /// - Returns: whether the driver must wake to the new deadline.
    public mutating func show(at now: Instant, probeAfter: Duration, queryAfter: Duration) -> Bool {
        guard phase == .silent else { return false }
        phase = .probing(sent: 0)
        publishingDue = now + probeAfter
        query = (now + queryAfter, .seconds(1))
        return true
    }

    /// Stops publishing and browsing.
    /// - Returns: whether a goodbye is owed: the name was announced.
    public mutating func hide() -> Bool {
        defer { (phase, publishingDue, query) = (.silent, nil, nil) }
        return isPublished
    }

    /// What is due at `now`, with the next step scheduled.
    public mutating func fire(at now: Instant) -> [Action] {
        var actions: [Action] = []
        if let due = publishingDue, due <= now {
            switch phase {
            case .probing(let sent):
                actions.append(.probe(unicastResponse: sent == 0))
                phase = sent < 2 ? .probing(sent: sent + 1) : .announcing(sent: 0)
                publishingDue = now + Self.probeSpacing
            case .announcing(let sent):
                actions.append(.announce(first: sent == 0))
                (phase, publishingDue) = sent < 1 ? (.announcing(sent: sent + 1), now + .seconds(1)) : (.published, nil)
            case .silent, .published, .gaveUp:
                publishingDue = nil
            }
        }
        if let (due, gap) = query, due <= now {
            actions.append(.query)
            // Continuous querying (section 5.2): each gap twice the last, up to a minute.
            query = (now + gap, min(gap * 2, Self.longestQueryGap))
        }
        return actions
    }

    /// Another responder's answer claims the name (or the host name) with other data (section 9):
    /// the next name, probed for from the start.
    public mutating func conflictHeard(at now: Instant) -> [Action] {
        guard claimsName else { return [] }
        guard renames < Self.maximumRenames else {
            (phase, publishingDue) = (.gaveUp, nil)
            return [.giveUp]
        }
        renames += 1
        instanceName = "\(baseName.clipped(toUTF8: 50)) (\(renames + 1))"
        probeAgain(at: now, after: .seconds(1))
        return [.rename(to: instanceName)]
    }

    /// Another host probes for a name this one probes for (section 8.2): when its records win,
    /// this one waits a second and probes again; if the other then holds the name, its answer is
    /// a conflict.
    /// - Parameter theirsWin: what `ProbeTieBreak` says for each name both probe for.
    /// - Returns: whether the driver must wake to the new deadline.
    public mutating func simultaneousProbeHeard(theirsWin: Bool, at now: Instant) -> Bool {
        guard isProbing, theirsWin else { return false }
        probeAgain(at: now, after: .seconds(1))
        return true
    }

    private mutating func probeAgain(at now: Instant, after delay: Duration) {
        recentConflicts = recentConflicts.filter { now - $0 < Self.conflictWindow } + [now]
        let slow = recentConflicts.count >= Self.conflictBurst
        if slow { recentConflicts.removeFirst() }
        phase = .probing(sent: 0)
        publishingDue = now + (slow ? Self.slowProbe : delay)
    }

    /// The browser has a new question to ask: querying starts over, the first query at once and
    /// the gaps doubling again from a second (section 5.2), unless it is silent.
    /// - Returns: whether the driver must wake to the new deadline.
    public mutating func questionAdded(at now: Instant) -> Bool {
        guard query != nil else { return false }
        query = (now, .seconds(1))
        return true
    }

    /// Another browser asked the question this one asks, listing no known answer this one would
    /// not (section 7.3): it counts as this one's own, sent now, so that a crowd of daemons asks
    /// about once a round, not once each.
    public mutating func sameQueryHeard(at now: Instant) {
        guard let (_, gap) = query else { return }
        query = (now + gap, min(gap * 2, Self.longestQueryGap))
    }

    /// How to answer a query this daemon has answers to.
    /// - Parameters:
    ///   - names: the names the query asks about.
    ///   - unicastAsked: whether every question asks for a unicast answer.
    ///   - legacy: whether it came from a port other than 5353 (section 6.7).
    public mutating func reply(to names: [String], unicastAsked: Bool, legacy: Bool, at now: Instant) -> Reply {
        guard isPublished else { return .none }
        if legacy || unicastAsked {
            guard unicastReplies.take(at: now) else { return .none }
            return legacy ? .legacyUnicast : .unicast
        }
        let due = names.contains { name in lastAnswered[name].map { now - $0 >= .seconds(1) } ?? true }
        guard due else { return .none }
        if lastAnswered.count > Self.answeredNamesKept { lastAnswered = [:] }
        for name in names { lastAnswered[name] = now }
        return .multicast
    }
}
