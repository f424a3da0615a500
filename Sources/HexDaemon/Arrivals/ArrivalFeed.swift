import Synchronization

/// Hands each arrival to every subscriber as it happens: a fan-out inside the process, without a
/// hop to another actor. Subscribe before the daemon takes its first envelope, and nothing is
/// missed. A subscriber holds at most `buffered` arrivals it has not taken yet; past that the
/// oldest go (each subscriber bounds its own work further and says what it skips).
final class ArrivalFeed: Sendable {
    static let buffered = 1_000

    private struct Subscribers {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<Arrival>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    /// Every arrival from now on, until the stream is dropped.
    func subscribe() -> AsyncStream<Arrival> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Arrival.self, bufferingPolicy: .bufferingNewest(Self.buffered))
        let number = subscribers.withLock { subscribers in
            subscribers.next += 1
            subscribers.continuations[subscribers.next] = continuation
            return subscribers.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.continuations.removeValue(forKey: number) }
        }
        return stream
    }

    /// Hands `arrivals`, in this order, to every subscriber.
    func publish(_ arrivals: [Arrival]) {
        guard !arrivals.isEmpty else { return }
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations {
            for arrival in arrivals { continuation.yield(arrival) }
        }
    }
}
