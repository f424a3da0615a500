/// When an undelivered send is tried again: exponential backoff with jitter, so that many
/// senders waiting for one peer do not all come back at the same moment.
public struct RetrySchedule: Sendable, Equatable {
    /// The wait after the first failed attempt, before jitter.
    public var first: Duration
    /// The longest wait, before jitter.
    public var longest: Duration

    public init(first: Duration = .seconds(1), longest: Duration = .seconds(300)) {
        self.first = first
        self.longest = longest
    }

    /// The wait after `attempts` failed attempts (1 or more): `first` doubled for each attempt
    /// after the first, at most `longest`, then scaled by `jitter` (from 0.5 to 1).
    public func delay(afterAttempts attempts: Int, jitter: Double) -> Duration {
        let doublings = min(max(attempts - 1, 0), 30)
        let unjittered = min(first * (1 << doublings), longest)
        return unjittered * min(max(jitter, 0.5), 1)
    }
}
