import HexEngine
import HexKit

/// The PIN a LocalSend sender must give (`--localsend-pin`, the `pin` query of `prepare-upload`),
/// as LocalSend 1.18 asks it: none given or a wrong one is `401`; after `triesPerAddress` wrong
/// ones (within `lockout` of the first) an address is refused `429`, the right PIN too, for
/// `lockout` from the last of them. Unlike 1.18, which locks an address until it restarts, a
/// lockout ends; and wrong tries from every address together are bounded too (`triesInAll` per
/// `lockout`), so that a host that takes many addresses cannot guess a short PIN by spreading
/// its tries.
///
/// Pure: the driver passes the time in.
public struct LocalSendPinGate<Address: Hashable & Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// What the gate says to one request.
    public enum Verdict: Equatable, Sendable {
        /// No PIN is required, or the right one was given.
        case pass
        /// None was given (`401`).
        case required
        /// A wrong one was given (`401`).
        case wrong
        /// Too many wrong ones from this address, or from all (`429`).
        case locked

        public var status: Int {
            switch self {
            case .pass: 200
            case .required, .wrong: 401
            case .locked: 429
            }
        }
    }

    private let pin: [UInt8]?
    public let triesPerAddress: Int
    public let triesInAll: Int
    public let lockout: Duration
    public let capacity: Int
    /// Wrong tries by address: how many, when the first of them was, and until when the address
    /// is locked out once they are too many.
    private var wrong: [Address: (count: Int, since: Instant, lockedUntil: Instant?)] = [:]
    /// The wrong tries from every address within the last `lockout`, oldest first.
    private var recentWrong: [Instant] = []

    /// - Parameter pin: nil or empty: no PIN is asked.
    public init(
        pin: String?, triesPerAddress: Int = 3, triesInAll: Int = 30, lockout: Duration = .seconds(600),
        capacity: Int = 1_024
    ) {
        self.pin = pin.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.triesPerAddress = triesPerAddress
        self.triesInAll = triesInAll
        self.lockout = lockout
        self.capacity = capacity
    }

    /// The verdict on `given` (the request's `pin`, nil when it has none) from `address` at `now`.
    public mutating func check(_ given: String?, from address: Address, at now: Instant) -> Verdict {
        guard let pin else { return .pass }
        recentWrong.removeAll { now - $0 >= lockout }
        if let tries = wrong[address] {
            let over = tries.lockedUntil.map { now >= $0 } ?? (now - tries.since >= lockout)
            if over { wrong[address] = nil }
        }
        if wrong[address]?.lockedUntil != nil || recentWrong.count >= triesInAll { return .locked }
        guard let given else { return .required }
        if Self.equal(Array(given.utf8), pin) {
            wrong[address] = nil
            return .pass
        }
        if wrong[address] == nil, wrong.count >= capacity,
            let oldest = wrong.min(by: { $0.value.since < $1.value.since })?.key
        {
            wrong[oldest] = nil
        }
        var tries = wrong[address] ?? (0, now, nil)
        tries.count += 1
        if tries.count >= triesPerAddress { tries.lockedUntil = now + lockout }
        wrong[address] = tries
        recentWrong.append(now)
        return .wrong
    }

    /// Compares in a time that does not depend on where the bytes differ.
    private static func equal(_ one: [UInt8], _ other: [UInt8]) -> Bool {
        var difference = UInt8(one.count == other.count ? 0 : 1)
        for index in 0..<max(one.count, other.count) {
            difference |= (index < one.count ? one[index] : 0) ^ (index < other.count ? other[index] : 0)
        }
        return difference == 0
    }
}
