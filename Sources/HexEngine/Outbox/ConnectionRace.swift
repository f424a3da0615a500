/// The decisions of a race between the candidate addresses of one peer, as RFC 8305 ("Happy
/// Eyeballs") makes them: the candidates start in order, each one when the one before it has
/// failed or has had `delay` to answer; the first to connect wins. Pure: the sender's task group
/// runs the attempts and the timers, and asks this what to do after each event.
public struct ConnectionRace<Connection: Sendable> {
    /// How long a candidate has to answer before the next one is dialled too (RFC 8305's
    /// "Connection Attempt Delay").
    public static var delay: Duration { .milliseconds(250) }

    public enum Event: Sendable {
        case opened(Connection)
        /// The candidate at `index` failed: `description` names it and says why.
        case failed(_ index: Int, _ description: String, any Error)
        /// The candidate at this index has had `delay`.
        case delayOver(Int)
    }

    public enum Step {
        /// Dial the candidate at this index.
        case start(Int)
        /// Wait for the next event.
        case wait
        /// Keep this connection; cancel every other attempt and timer.
        case won(Connection)
        /// Every candidate failed: throw `failure`.
        case lost
    }

    public let candidates: Int
    /// Candidates started so far (the first is started with the race), and those still running.
    public private(set) var started = 1
    public private(set) var running = 1
    /// The failures, in the order they came.
    private var failures: [(description: String, error: any Error)] = []

    public init(candidates: Int) {
        self.candidates = candidates
    }

    /// What to do after `event`. Past the deadline, or once the send is cancelled, no further
    /// candidate starts.
    public mutating func take(_ event: Event, pastDeadline: Bool) -> Step {
        switch event {
        case .opened(let connection):
            return .won(connection)
        case .failed(_, let description, let error):
            running -= 1
            failures.append((description, error))
            let stop = pastDeadline || error is CancellationError
            if !stop, started < candidates { return startNext() }
            return running == 0 ? .lost : .wait
        case .delayOver(let index):
            // Only the latest candidate's delay starts the next; an earlier failure may have.
            guard index + 1 == started, started < candidates, !pastDeadline else { return .wait }
            return startNext()
        }
    }

    private mutating func startNext() -> Step {
        started += 1
        running += 1
        return .start(started - 1)
    }

    /// Why the race was lost: the error of the candidate that failed last, naming the others when
    /// it is a `SendError`; a cancellation as itself.
    public var failure: any Error {
        guard let last = failures.last else { return SendError.undelivered("no address to send to") }
        if failures.contains(where: { $0.error is CancellationError }) { return CancellationError() }
        guard let error = last.error as? SendError, failures.count > 1 else { return last.error }
        let tried = " (tried before: " + failures.dropLast().map(\.description).joined(separator: "; ") + ")"
        switch error {
        case .undelivered(let reason): return SendError.undelivered(reason + tried)
        case .refused(let reason): return SendError.refused(reason + tried)
        }
    }
}
