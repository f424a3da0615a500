/// Offers from devices of other protocols that wait for the person's yes (a LocalSend device the
/// accept policy does not take, or a stranger past the budgets; a Quick Share sender's files): one
/// per device, at most `capacity` at once, each for at most `wait`, which the sender's request is
/// held for (LocalSend's apps wait for their receiver's person as long). The person answers by the
/// device's ID.
///
/// Pure: the driver holds the requests' continuations by the number each gets, passes the time in,
/// and resumes what `answer` and `expire` name.
public struct OfferConsent<Key: Hashable & Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// An offer waiting.
    public struct Request: Sendable, Equatable {
        public let number: UInt64
        public let key: Key
        /// The device's name, as it gives it.
        public let name: String
        /// What the device offers, as the person reads it ("a message", "3 files, 12 MiB").
        public let what: String
        public let until: Instant
    }

    /// Why an offer cannot wait.
    public enum Refusal: Error, Equatable, Sendable {
        /// The device has an offer waiting already.
        case waitingAlready
        /// As many offers wait as may.
        case full
    }

    public let wait: Duration
    public let capacity: Int
    public private(set) var waiting: [Request] = []
    private var issued: UInt64 = 0

    public init(wait: Duration = .seconds(60), capacity: Int = 16) {
        self.wait = wait
        self.capacity = capacity
    }

    /// An offer from `key` starts waiting at `now`: its number. Offers whose wait is over still
    /// count until `expire` hands them to the driver, which refuses each.
    /// - Throws: `Refusal`.
    public mutating func open(_ key: Key, named name: String, offering what: String, at now: Instant)
        throws(Refusal) -> Request
    {
        guard !waiting.contains(where: { $0.key == key }) else { throw .waitingAlready }
        guard waiting.count < capacity else { throw .full }
        issued += 1
        let request = Request(number: issued, key: key, name: name, what: what, until: now + wait)
        waiting.append(request)
        return request
    }

    /// The person answered `key`'s offer: the request it ends; nil when none waits.
    public mutating func answer(_ key: Key) -> Request? {
        guard let index = waiting.firstIndex(where: { $0.key == key }) else { return nil }
        return waiting.remove(at: index)
    }

    /// The device withdrew the offer numbered `number` (it closed its connection, or cancelled):
    /// the request it ends, which is refused; nil when it waits no more.
    public mutating func withdraw(_ number: UInt64) -> Request? {
        guard let index = waiting.firstIndex(where: { $0.number == number }) else { return nil }
        return waiting.remove(at: index)
    }

    /// The offers whose wait is over at `now`, ended (each is refused).
    public mutating func expire(at now: Instant) -> [Request] {
        let over = waiting.filter { $0.until <= now }
        waiting.removeAll { $0.until <= now }
        return over
    }

}
