import HexEngine
import HexKit

/// The KDE Connect devices hexd has a link with (one TLS connection each), and when it dials one
/// or broadcasts its own identity, so that each device keeps exactly one link with hexd.
///
/// A device that hears an identity broadcast connects to its sender; so does hexd. The apps
/// broadcast only when they start or are refreshed, and Debian's 22.12 loses a device when the
/// link it uses is closed under it or both sides dial each other at once. So hexd:
/// - broadcasts when it starts, when the person asks, and every `waitingInterval` while something waits for
///   a device that has no link (the device then dials hexd);
/// - sends its identity to a device found by DNS-SD (`_kdeconnect._udp`) that has no link, as the
///   apps do (the device then dials hexd): on a network that drops broadcasts, or after a link
///   lost in silence, that is how a device and hexd meet again;
/// - dials a device it hears `dialDelay` after the broadcast, unless the device dialed hexd
///   meanwhile (it heard hexd's own broadcast), and never while a link or a dial is up;
/// - takes a device's new link in place of its old one and leaves the old one for the device to
///   close (the app closes it once its new handshake is done);
/// - keeps at most `maximumUnpairedLinks` links with devices not paired (the apps' own cap).
///
/// Anyone on the LAN can broadcast any identity: one per device per `identitySpacing` is heard,
/// a device's own ID is ignored, at most `dialsAtOnce` dials are under way (the others wait their
/// turn), a device whose dial failed is not dialed again for `dialBackoff`, and a dial only opens a
/// TCP connection, whose TLS handshake then proves the ID (the certificate's common name).
///
/// Pure: the driver passes the time in, performs the actions and calls `tick` at `deadline`.
public struct KDEConnectLinks<Address: Hashable & Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public enum Action: Sendable, Equatable {
        /// Send hexd's identity to every broadcast address.
        case broadcast
        /// Dial `identity.tcpPort` at `address`, send hexd's identity, and then take the TLS
        /// server's role; say how it went with `linkUp` or `dialFailed`.
        case dial(KDEConnectIdentity, at: Address)
        /// Send hexd's identity to `address` alone, by unicast UDP.
        case identity(to: Address)
    }

    /// The apps drop a second identity of a device within this long.
    public static var identitySpacing: Duration { .milliseconds(500) }
    /// How long hexd leaves a device it heard to dial it first.
    public static var dialDelay: Duration { .milliseconds(500) }
    /// Broadcasts at most this often while a device with no link is waited for.
    public static var waitingInterval: Duration { .seconds(60) }
    /// A broadcast asked for goes out at most this often.
    static var refreshSpacing: Duration { .seconds(1) }
    /// Dials under way at most: each holds a socket for up to 15 s.
    public static var dialsAtOnce: Int { 8 }
    /// A device whose dial failed is not dialed again for this long.
    public static var dialBackoff: Duration { .seconds(30) }
    /// hexd's identity goes to a device found by DNS-SD at most this often (a browser hears an
    /// instance at every query round and announcement).
    public static var foundSpacing: Duration { .seconds(30) }
    /// The apps' `MAX_UNPAIRED_CONNECTIONS`.
    public static var maximumUnpairedLinks: Int { 42 }
    /// Devices remembered at most (their last identity, a dial due); the one heard longest ago goes.
    public static var capacity: Int { 1_024 }

    public let ownDeviceID: String
    private var linked: [String: Bool] = [:]  // device ID -> paired
    private var dialing: Set<String> = []
    private var dialsDue: [String: (identity: KDEConnectIdentity, address: Address, at: Instant)] = [:]
    private var lastHeard = RecencyList<String>()
    private var heardAt: [String: Instant] = [:]
    private var waitedFor: Set<String> = []
    private var failedAt: [String: Instant] = [:]
    private var lastBroadcast: Instant?
    /// When hexd's identity last went to each device found by DNS-SD, by device ID.
    private var toldAt: [String: Instant] = [:]

    /// - Parameter ownDeviceID: hexd's device ID; every ID given to or by this type is in lower case.
    public init(ownDeviceID: String) {
        self.ownDeviceID = ownDeviceID.lowercased()
    }

    /// The devices with a link now.
    public var linkedDevices: Set<String> { Set(linked.keys) }

    /// When `tick` is due next: a dial (while fewer than `dialsAtOnce` are under way: else once
    /// one ends, which the driver says, and then ticks), or the next broadcast for a device waited
    /// for.
    public var deadline: Instant? {
        let dial = dialing.count < Self.dialsAtOnce ? dialsDue.values.map(\.at).min() : nil
        let waiting = isWaiting ? lastBroadcast.map { $0 + Self.waitingInterval } : nil
        return [dial, waiting].compactMap { $0 }.min()
    }

    /// Whether a device waited for has no link.
    private var isWaiting: Bool { waitedFor.contains { linked[$0] == nil } }

    /// hexd started: broadcast.
    public mutating func started(at now: Instant) -> [Action] {
        lastBroadcast = now
        return [.broadcast]
    }

    /// The user asked for a refresh: broadcast, at most once per `refreshSpacing`.
    public mutating func refresh(at now: Instant) -> [Action] {
        if let last = lastBroadcast, now - last < Self.refreshSpacing { return [] }
        lastBroadcast = now
        return [.broadcast]
    }

    /// A device's identity arrived in a datagram from `address` (the driver checked its rules and
    /// the downgrade guard).
    public mutating func heard(_ identity: KDEConnectIdentity, from address: Address, at now: Instant) -> [Action] {
        // Device IDs are told apart in any case: one in another case is the same device.
        let id = identity.deviceID.lowercased()
        guard id != ownDeviceID else { return [] }
        if let last = heardAt[id], now - last < Self.identitySpacing { return [] }
        remember(id, at: now)
        guard linked[id] == nil, !dialing.contains(id), dialsDue[id] == nil else { return [] }
        // The first address heard is the one dialed: a later datagram claiming the device from
        // elsewhere does not move the dial.
        let after = failedAt[id].map { max($0 + Self.dialBackoff, now + Self.dialDelay) } ?? now + Self.dialDelay
        dialsDue[id] = (identity, address, after)
        return []
    }

    /// A device was found by DNS-SD at `address`, its ID as its TXT record gives it: hexd's
    /// identity goes to it unless it has a link or a dial, or was sent one within `foundSpacing`.
    /// At most `capacity` devices are remembered; past that, one is told only when those told
    /// before are `foundSpacing` old.
    public mutating func found(_ deviceID: String, at address: Address, now: Instant) -> [Action] {
        let id = deviceID.lowercased()
        guard id != ownDeviceID, linked[id] == nil, !dialing.contains(id) else { return [] }
        if let last = toldAt[id], now - last < Self.foundSpacing { return [] }
        if toldAt[id] == nil, toldAt.count >= Self.capacity {
            toldAt = toldAt.filter { now - $0.value < Self.foundSpacing }
            guard toldAt.count < Self.capacity else { return [] }
        }
        toldAt[id] = now
        return [.identity(to: address)]
    }

    /// Whether a link with a device whose TLS handshake just proved `deviceID` is taken (the
    /// driver closes it when not): a device paired always; one not paired while fewer than
    /// `maximumUnpairedLinks` such are up, or in place of its own old link.
    public mutating func linkUp(_ deviceID: String, paired: Bool, at now: Instant) -> Bool {
        dialing.remove(deviceID)
        dialsDue[deviceID] = nil
        failedAt[deviceID] = nil
        if !paired && linked[deviceID] == nil && linked.values.count(where: { !$0 }) >= Self.maximumUnpairedLinks {
            return false
        }
        linked[deviceID] = paired
        remember(deviceID, at: now)
        return true
    }

    /// A device was paired or unpaired while its link is up.
    public mutating func setPaired(_ deviceID: String, _ paired: Bool) {
        if linked[deviceID] != nil { linked[deviceID] = paired }
    }

    /// The device's link ended (closed by either side, or failed), and no newer link of it is up.
    public mutating func linkDown(_ deviceID: String) {
        linked[deviceID] = nil
    }

    /// A dial of `deviceID` failed before a link was up.
    public mutating func dialFailed(_ deviceID: String, at now: Instant) {
        dialing.remove(deviceID)
        failedAt[deviceID] = now
    }

    /// Something waits for the device (a send in the outbox) or no longer does: while one waits
    /// and has no link, hexd broadcasts every `waitingInterval` so that it dials hexd.
    public mutating func wait(for deviceID: String, _ waiting: Bool) {
        if waiting { waitedFor.insert(deviceID) } else { waitedFor.remove(deviceID) }
    }

    /// The dials due, and a broadcast when one is due for a device waited for.
    public mutating func tick(at now: Instant) -> [Action] {
        var actions: [Action] = []
        for (id, due) in dialsDue.sorted(by: { $0.value.at < $1.value.at }) where due.at <= now {
            guard dialing.count < Self.dialsAtOnce else { break }
            dialsDue[id] = nil
            guard linked[id] == nil, !dialing.contains(id) else { continue }
            dialing.insert(id)
            actions.append(.dial(due.identity, at: due.address))
        }
        if isWaiting, lastBroadcast.map({ now - $0 >= Self.waitingInterval }) ?? true {
            lastBroadcast = now
            actions.append(.broadcast)
        }
        return actions
    }

    private mutating func remember(_ id: String, at now: Instant) {
        heardAt[id] = now
        lastHeard.touch(id)
        while lastHeard.count > Self.capacity, let oldest = lastHeard.oldest {
            lastHeard.remove(oldest)
            heardAt[oldest] = nil
            dialsDue[oldest] = nil
            failedAt[oldest] = nil
        }
    }
}
