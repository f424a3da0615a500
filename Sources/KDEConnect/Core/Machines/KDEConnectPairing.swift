import HexEngine
import HexKit

/// Pairing with one KDE Connect device, as the apps do it (kdeconnect-kde
/// `core/pairinghandler.cpp`, 22.12's `lanpairinghandler.cpp`): a `kdeconnect.pair` with
/// `pair: true` asks, the same in answer accepts, `pair: false` declines, cancels or unpairs, and
/// a request unanswered for `requestLifetime` ends with `pair: false`.
///
/// - hexd never accepts by itself: a request from the device waits for the person
///   (`accept`/`decline`), who compares the verification code both sides show.
/// - hexd never sends `pair: true` to a device it holds paired: 22.12 starts every link unpaired
///   and takes it as a new request, dropping its trust.
/// - A request from a device hexd holds paired means the device forgot hexd: hexd forgets it too
///   and asks the person again (as the apps do).
/// - Protocol 8 dates requests: one from a clock more than `maximumClockSkew` away is declined
///   (the verification code covers the date). hexd dates its own requests for every version, as
///   the current apps do; 22.12 ignores the date.
/// - A device not paired that sends anything else than pairing is told `pair: false`, at most once
///   per `refusalSpacing` (the apps do the same; it also cancels a request of its own). A request
///   that follows a refusal or a cancelled request within that spacing is not shown.
///
/// Pure: the driver passes both clocks in (the monotonic one for the lifetime, the wall clock for
/// dates), performs the actions and calls `tick` at `deadline`.
public struct KDEConnectPairing: Sendable, Equatable {
    public typealias Instant = ContinuousClock.Instant

    public enum State: Sendable, Equatable {
        case notPaired
        /// The device asked at `since`; `timestamp` is its request's date (protocol 8).
        case requestedByPeer(since: Instant, timestamp: Int64?)
        /// hexd asked at `since`, dating its request `timestamp`.
        case requestedByUs(since: Instant, timestamp: Int64)
        case paired
    }

    public enum Action: Sendable, Equatable {
        /// Send this pairing packet on the device's link.
        case send(KDEConnectPair)
        /// Show the device's request where pairing requests are shown (with its verification
        /// code, which covers `timestamp` in protocol 8).
        case askPerson(timestamp: Int64?)
        /// The device is paired now: pin its certificate.
        case trust
        /// The device is no longer paired: forget its certificate.
        case distrust
        /// A request ended without pairing, and why.
        case ended(Ending)
    }

    public enum Ending: Sendable, Equatable {
        case declinedByDevice, cancelledByDevice, expired, clocksApart, declinedByPerson
    }

    /// Why something the person asked for cannot be done now.
    public enum Refusal: Error, Sendable, Equatable {
        case noRequest, alreadyPaired, notPaired
    }

    /// The apps' pairing timeout.
    public static var requestLifetime: Duration { .seconds(30) }
    /// Protocol 8's limit on the distance between the two clocks, in seconds.
    public static var maximumClockSkew: Int64 { 1_800 }
    static var refusalSpacing: Duration { .seconds(1) }

    public private(set) var state: State
    /// The protocol version spoken with the device (7 or 8).
    public var version: Int
    private var lastRefusal: Instant?

    public init(paired: Bool, version: Int) {
        state = paired ? .paired : .notPaired
        self.version = version
    }

    public var isPaired: Bool { state == .paired }

    /// When a request ends by itself.
    public var deadline: Instant? {
        switch state {
        case .requestedByPeer(let since, _), .requestedByUs(let since, _): since + Self.requestLifetime
        case .notPaired, .paired: nil
        }
    }

    /// A pairing packet from the device.
    /// - Parameter wallClock: seconds since 1970 now.
    public mutating func received(_ packet: KDEConnectPair, at now: Instant, wallClock: Int64) -> [Action] {
        switch (packet.pair, state) {
        case (true, .notPaired):
            return askedByDevice(packet, at: now, wallClock: wallClock)
        case (true, .paired):
            state = .notPaired
            return [.distrust] + askedByDevice(packet, at: now, wallClock: wallClock)
        case (true, .requestedByUs):
            state = .paired
            return [.trust]
        case (true, .requestedByPeer):
            return []
        case (false, .requestedByUs):
            state = .notPaired
            return [.ended(.declinedByDevice)]
        case (false, .requestedByPeer):
            // Asking and cancelling in turn asks the person no faster than a refusal would.
            state = .notPaired
            lastRefusal = now
            return [.ended(.cancelledByDevice)]
        case (false, .paired):
            state = .notPaired
            return [.distrust]
        case (false, .notPaired):
            return []
        }
    }

    private mutating func askedByDevice(_ packet: KDEConnectPair, at now: Instant, wallClock: Int64) -> [Action] {
        // A device that asks again at once after a refusal is not answered each time.
        if let last = lastRefusal, now - last < Self.refusalSpacing { return [] }
        if version >= 8 {
            // Only hexd's own clock is added to (a peer's date can be any Int64).
            guard let timestamp = packet.timestamp, timestamp >= wallClock - Self.maximumClockSkew,
                timestamp <= wallClock + Self.maximumClockSkew
            else {
                lastRefusal = now
                return [.send(KDEConnectPair(pair: false)), .ended(.clocksApart)]
            }
        }
        state = .requestedByPeer(since: now, timestamp: version >= 8 ? packet.timestamp : nil)
        return [.askPerson(timestamp: version >= 8 ? packet.timestamp : nil)]
    }

    /// The person asks to pair with the device (`hexctl pair NAME`); accepting its own request
    /// when it has one.
    /// - Throws: `Refusal.alreadyPaired`.
    public mutating func request(at now: Instant, wallClock: Int64) throws(Refusal) -> [Action] {
        switch state {
        case .paired: throw .alreadyPaired
        case .requestedByPeer: return try accept()
        case .requestedByUs: return []
        case .notPaired:
            state = .requestedByUs(since: now, timestamp: wallClock)
            return [.send(KDEConnectPair(pair: true, timestamp: wallClock))]
        }
    }

    /// The person accepts the device's request.
    /// - Throws: `Refusal.noRequest` when the device asked nothing (or its request expired).
    public mutating func accept() throws(Refusal) -> [Action] {
        guard case .requestedByPeer = state else { throw .noRequest }
        state = .paired
        return [.send(KDEConnectPair(pair: true)), .trust]
    }

    /// hexd could not keep the pairing it was to trust (its store failed): the device is not paired
    /// after all, and is told so.
    public mutating func trustNotKept() -> [Action] {
        guard state == .paired else { return [] }
        state = .notPaired
        return [.send(KDEConnectPair(pair: false))]
    }

    /// The person (or hexd, for them) declines the device's request.
    /// - Throws: `Refusal.noRequest`.
    public mutating func decline(at now: Instant) throws(Refusal) -> [Action] {
        guard case .requestedByPeer = state else { throw .noRequest }
        state = .notPaired
        lastRefusal = now
        return [.send(KDEConnectPair(pair: false)), .ended(.declinedByPerson)]
    }

    /// The person unpairs the device, or withdraws hexd's request.
    /// - Throws: `Refusal.notPaired` when there is neither.
    public mutating func unpair(at now: Instant) throws(Refusal) -> [Action] {
        switch state {
        case .paired:
            state = .notPaired
            return [.send(KDEConnectPair(pair: false)), .distrust]
        case .requestedByUs:
            state = .notPaired
            return [.send(KDEConnectPair(pair: false))]
        case .requestedByPeer: return try decline(at: now)
        case .notPaired: throw .notPaired
        }
    }

    /// Another packet than pairing came from the device: refused unless it is paired.
    /// - Returns: whether the packet may be taken, and what to do.
    public mutating func otherPacket(at now: Instant) -> (taken: Bool, actions: [Action]) {
        switch state {
        case .paired: return (true, [])
        case .requestedByUs, .requestedByPeer: return (false, [])
        case .notPaired:
            if let last = lastRefusal, now - last < Self.refusalSpacing { return (false, []) }
            lastRefusal = now
            return (false, [.send(KDEConnectPair(pair: false))])
        }
    }

    /// Ends a request older than `requestLifetime`.
    public mutating func tick(at now: Instant) -> [Action] {
        guard let deadline, now >= deadline else { return [] }
        state = .notPaired
        return [.send(KDEConnectPair(pair: false)), .ended(.expired)]
    }
}
