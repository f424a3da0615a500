import HexEngine
import HexKit

/// The LocalSend devices hexd knows, and when it announces itself to them (LocalSend's
/// multicast discovery, as its apps do it): a burst at start (100 ms, 500 ms and 2 s after), then
/// a refresh every `refreshInterval`, because the apps announce only when they start or are
/// refreshed and answer an announcement by registering. A device is listed once TLS proved the
/// fingerprint it claims, and is gone when nothing was heard from it for `lifetime`. A device
/// whose encryption is off (it announces `protocol: http`) has no certificate: it is listed once
/// its API at the address it announced from answers with the fingerprint it claims, a random text
/// that proves nothing, under an ID of its own kind (`LocalSendID.plain`), which can never
/// take the place of a device proven by its certificate.
///
/// Anyone on the LAN can send an announcement with any fingerprint: an announcement or an
/// unproven `register` only makes hexd register with the device over HTTPS (which proves the
/// device's certificate), at most once per `answerSpacing` for a fingerprint and `answerRate` a
/// second in all. At most `capacity` devices are kept; a new one takes the place of the one
/// unheard longest.
///
/// Another hexd's persona never reaches it: the driver leaves out a description whose signed
/// claim (`PersonaClaim`) proves it one, and that daemon is met by hexd's own protocol.
///
/// Pure: the driver passes the time in, performs the actions and waits until `deadline`.
public struct LocalSendPresence<Address: Hashable & Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// A device whose fingerprint TLS proved, where it was last heard from.
    public struct Device: Sendable, Equatable {
        /// The ID it goes by in hexd (`LocalSendID.certified`, or `LocalSendID.plain` when plain), by
        /// which it is listed.
        public let peerID: String
        public var description: LocalSendDevice
        public var address: Address
        public var firstSeen: Instant
        public var lastSeen: Instant

        /// The fingerprint in upper case, as LocalSend 1.18 writes it: the device's identity.
        public var fingerprint: String { description.fingerprint.uppercased() }
        /// Whether its encryption is off: its API is plain HTTP, and its fingerprint proves nothing.
        public var isPlainHTTP: Bool { description.scheme == .http }
    }

    /// What the driver does.
    public enum Action: Sendable, Equatable {
        /// Announce hexd to the multicast group.
        case announce
        /// Register hexd with the device at `address` (HTTPS `register`, or HTTP when the device
        /// says its encryption is off); when the server's certificate is the one the device claims
        /// (over HTTP: when its answer claims the same fingerprint), tell `proven(_:at:now:)`.
        case register(LocalSendDevice, at: Address)
        case found(Device)
        /// A listed device changed its name, address or anything else it describes.
        case updated(Device)
        /// A listed device announced itself again (an app that started, or its person refreshed)
        /// and proved it: what waits for it may go now.
        case announcedAgain(Device)
        case lost(Device)
    }

    /// The apps' start burst, after the start.
    static var burst: [Duration] { [.milliseconds(100), .milliseconds(500), .seconds(2)] }
    /// Registers with one device at most this often.
    public static var answerSpacing: Duration { .seconds(5) }
    /// Registers with any devices at most this many a second (twice as many at once).
    public static var answerRate: Double { 4 }
    /// A refresh asked for by the user goes out at most this often.
    static var refreshSpacing: Duration { .seconds(1) }

    public let ownFingerprint: String
    public let refreshInterval: Duration
    /// Unheard for this long, a device is gone: two refreshes and a margin.
    public var lifetime: Duration { refreshInterval * 2 + .seconds(15) }
    public let capacity: Int
    private var listed: [String: Device] = [:]
    /// Listed devices that announced themselves since they last proved who they are, with the
    /// address each announcement came from: only a proof from there makes it a return (anyone can
    /// announce a device's fingerprint).
    private var announcedSinceProof: [String: Address] = [:]
    private var announcements: [Instant] = []
    private var lastAnnouncement: Instant?
    private var answers: KeyedThrottle<String>
    private var answerBudget: TokenBucket
    /// Whether a device listed at the first address stays there when heard or proven at the
    /// second (one heard over IPv4 and IPv6 keeps its IPv4 address).
    private let keepsAddress: @Sendable (Address, Address) -> Bool

    /// - Parameters:
    ///   - ownFingerprint: hexd's persona's, so that its own announcements are ignored.
    ///   - keepsAddress: whether a device listed at the first address stays there when it is heard
    ///     or proven at the second.
    public init(
        ownFingerprint: String, refreshInterval: Duration = .seconds(30), capacity: Int = 256,
        keepsAddress: @escaping @Sendable (Address, Address) -> Bool = { _, _ in false }
    ) {
        self.keepsAddress = keepsAddress
        self.ownFingerprint = ownFingerprint.uppercased()
        self.refreshInterval = refreshInterval
        self.capacity = capacity
        answers = KeyedThrottle(interval: Self.answerSpacing, capacity: capacity * 4)
        answerBudget = TokenBucket(rate: Self.answerRate, burst: Self.answerRate * 2)
    }

    /// The devices listed, the latest heard first.
    public var devices: [Device] { listed.values.sorted { $0.lastSeen > $1.lastSeen } }

    /// When the driver must act next: an announcement, or a device running out.
    public var deadline: Instant? {
        ([announcements.min()] + [listed.values.map(\.lastSeen).min().map { $0 + lifetime }]).compactMap { $0 }.min()
    }

    /// Starts announcing at `now`: the burst, then the refreshes.
    public mutating func start(at now: Instant) {
        announcements = Self.burst.map { now + $0 }
    }

    /// The user asked who is there (`hexctl peers --refresh`): an announcement now, unless one
    /// went out within `refreshSpacing`.
    public mutating func refresh(at now: Instant) -> [Action] {
        if let lastAnnouncement, now - lastAnnouncement < Self.refreshSpacing { return [] }
        lastAnnouncement = now
        return [.announce]
    }

    /// Announcements due at `now`, and devices gone by then.
    public mutating func tick(at now: Instant) -> [Action] {
        var actions: [Action] = []
        if announcements.contains(where: { $0 <= now }) {
            announcements.removeAll { $0 <= now }
            if announcements.isEmpty { announcements = [now + refreshInterval] }
            lastAnnouncement = now
            actions.append(.announce)
        }
        for device in listed.values where now - device.lastSeen >= lifetime {
            listed[device.peerID] = nil
            announcedSinceProof[device.peerID] = nil
            actions.append(.lost(device))
        }
        return actions
    }

    /// A multicast announcement (or an answer to one) came from `address`: hexd registers with the
    /// device, which proves it, unless that was done just now. A datagram proves nothing (anyone
    /// can send one from any address), so it changes no listed device and keeps none listed: only
    /// what TLS proved does.
    public mutating func heard(_ description: LocalSendDevice, from address: Address, at now: Instant) -> [Action] {
        guard description.fingerprint.uppercased() != ownFingerprint, let id = Self.id(of: description) else {
            return []
        }
        // As listed, it registers with hexd at each refresh, which keeps it listed; unless it asks
        // who is there (an app that starts announces so, and lists only those that answer).
        if let device = listed[id], device.address == address || keepsAddress(device.address, address),
            Self.describesAlike(device.description, description), description.announce != true
        {
            return []
        }
        if listed[id] != nil, description.announce == true { announcedSinceProof[id] = address }
        return askToProve(description, id: id, at: address, now: now)
    }

    /// hexd shows itself again: an announcement now, whenever the last one went out.
    public mutating func resume(at now: Instant) -> [Action] {
        lastAnnouncement = now
        return [.announce]
    }

    /// A device registered with hexd from `address`. `proven`: it showed the certificate whose
    /// fingerprint it claims (LocalSend 1.18 does); otherwise (older apps show none) hexd registers
    /// with it in turn to prove it.
    public mutating func registered(
        _ description: LocalSendDevice, from address: Address, proven: Bool, at now: Instant
    ) -> [Action] {
        guard description.fingerprint.uppercased() != ownFingerprint, let id = Self.id(of: description) else {
            return []
        }
        return proven
            ? self.proven(description, at: address, now: now) : askToProve(description, id: id, at: address, now: now)
    }

    /// hexd's `register` to the device at `address` was answered by a server whose certificate is
    /// the one the device claims (over plain HTTP, by one that claims its fingerprint): it is listed.
    public mutating func proven(_ description: LocalSendDevice, at address: Address, now: Instant) -> [Action] {
        guard description.fingerprint.uppercased() != ownFingerprint, let id = Self.id(of: description) else {
            return []
        }
        if var device = listed[id] {
            let announced = announcedSinceProof[id] == address
            if announced { announcedSinceProof[id] = nil }
            let address = keepsAddress(device.address, address) ? device.address : address
            let changed = device.description != description || device.address != address
            device.description = description
            device.address = address
            device.lastSeen = now
            listed[id] = device
            return (changed ? [.updated(device)] : []) + (announced ? [.announcedAgain(device)] : [])
        }
        var actions: [Action] = []
        if listed.count >= capacity, let oldest = listed.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            listed[oldest.peerID] = nil
            announcedSinceProof[oldest.peerID] = nil
            actions.append(.lost(oldest))
        }
        let device = Device(peerID: id, description: description, address: address, firstSeen: now, lastSeen: now)
        listed[id] = device
        actions.append(.found(device))
        return actions
    }

    /// Whether two descriptions say the same of a device, whether they ask who is there or not.
    private static func describesAlike(_ one: LocalSendDevice, _ other: LocalSendDevice) -> Bool {
        var one = one
        one.announce = other.announce
        return one == other
    }

    private mutating func askToProve(
        _ description: LocalSendDevice, id: String, at address: Address, now: Instant
    ) -> [Action] {
        guard answers.admit(id, at: now), answerBudget.take(at: now) else { return [] }
        return [.register(description, at: address)]
    }

    /// The ID a device `description` describes goes by, by which it is listed: its certificate's
    /// fingerprint, or, with its encryption off, the text it claims instead (nil when that is not
    /// one hexd takes, `LocalSendID.plain`). One kind never takes the other's place.
    public static func id(of description: LocalSendDevice) -> String? {
        description.scheme == .http
            ? LocalSendID.plain.id(description.fingerprint)
            : LocalSendID.certified.prefix + description.fingerprint.uppercased()
    }
}
