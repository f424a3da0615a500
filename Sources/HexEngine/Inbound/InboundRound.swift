import HexKit

/// How one connection's lines, read together, are acted on: in their order, each reply in the
/// order of the line it answers.
///
/// A run of Stores and Alerts goes to the store together (one commit). A Pair is acted on alone,
/// after everything before it, since it can change how the envelopes after it are trusted. A line
/// that is no envelope ends the run before it and is answered on its own. A Fetch ends the round:
/// its answer is a stream of its own, written after the replies owed before it, and the lines
/// after it wait for the whole file.
///
/// Feed the lines one by one with `take(_:)`, perform each step it returns in order, stop feeding
/// once `isOver`, and perform what `finish()` returns.
public struct InboundRound: Sendable {
    /// What to do next, in this order.
    public enum Step: Sendable, Equatable {
        /// Stores and Alerts acted on together, in one commit, answered in this order.
        case receive([Envelope])
        /// A Pair, acted on alone, with everything before it already done.
        case pair(Envelope)
        /// A line that is no envelope, answered with the reason.
        case unreadable(EnvelopeDecodingError)
        /// A Fetch: its file follows the replies owed so far; the round is over.
        case fetch(Envelope)
    }

    /// The most lines of one connection acted on together: what a peer pipelines beyond it waits
    /// for the next round, so one connection cannot make a transaction (or a reply) unbounded.
    public static let pipelineDepth = 64

    private let servesPairing: Bool
    private let servesFetch: Bool
    private var run: [Envelope] = []
    /// Whether a Fetch ended the round: the lines after it belong to the next one.
    public private(set) var isOver = false

    /// - Parameters:
    ///   - servesPairing: whether Pair envelopes are acted on (a legacy peer's daemon does not:
    ///     they then go with the run, to be answered as unsupported).
    ///   - servesFetch: whether Fetch envelopes are served (likewise).
    public init(servesPairing: Bool, servesFetch: Bool) {
        self.servesPairing = servesPairing
        self.servesFetch = servesFetch
    }

    /// The steps one more line makes due, given what reading it gave.
    public mutating func take(_ line: Result<Envelope, EnvelopeDecodingError>) -> [Step] {
        guard !isOver else { return [] }
        switch line {
        case .failure(let error):
            return flushed() + [.unreadable(error)]
        case .success(let envelope) where envelope.operationType == .fetch && servesFetch:
            isOver = true
            return flushed() + [.fetch(envelope)]
        case .success(let envelope) where envelope.operationType == .pair && servesPairing:
            return flushed() + [.pair(envelope)]
        case .success(let envelope):
            run.append(envelope)
            return []
        }
    }

    /// What is left once the lines are all taken: the run not yet handed to the store.
    public mutating func finish() -> [Step] {
        flushed()
    }

    private mutating func flushed() -> [Step] {
        guard !run.isEmpty else { return [] }
        defer { run = [] }
        return [.receive(run)]
    }
}
