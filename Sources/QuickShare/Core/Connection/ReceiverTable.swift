/// The Quick Share receivers DNS-SD found, as a pure table with the clock passed in: a phone in its
/// receive screen (or one a BLE nudge woke), Google's Windows app. Each is listed by its endpoint ID
/// while it is heard again within three of the intervals it was announced with (at least
/// `minimumLifetime`), and dropped when it says goodbye. At most `capacity` are listed: a newcomer
/// past it is not listed, so no flood of instances can grow the table.
public struct ReceiverTable<Address: Hashable & Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public struct Receiver: Sendable, Equatable {
        /// The 4-character endpoint ID of its instance name.
        public let endpointID: String
        /// Its name as its endpoint info gives it; nil for one that gives none (hidden, or a phone
        /// that advertises without it: rquickshare #431).
        public let name: String?
        public let deviceType: EndpointInfo.DeviceType
        public let address: Address
        public let port: UInt16
        public let lastHeard: Instant
        let lifetime: Duration

        /// The name people see: its own, else one made of its ID.
        public var label: String { name ?? "Quick Share device \(endpointID)" }
    }

    public static var minimumLifetime: Duration { .seconds(30) }
    public let capacity: Int
    public private(set) var receivers: [String: Receiver] = [:]

    public init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// An instance was heard: `endpointID` from its name, `info` from its TXT `n`, announced to be
    /// heard again every `interval`. False when it is not listed (the table is full).
    @discardableResult
    public mutating func heard(
        _ endpointID: String, info: EndpointInfo, at address: Address, port: UInt16, interval: Duration,
        now: Instant
    ) -> Bool {
        guard receivers[endpointID] != nil || receivers.count < capacity else { return false }
        receivers[endpointID] = Receiver(
            endpointID: endpointID, name: info.name, deviceType: info.deviceType, address: address, port: port,
            lastHeard: now, lifetime: max(interval * 3, Self.minimumLifetime))
        return true
    }

    /// The instance said goodbye.
    public mutating func left(_ endpointID: String) {
        receivers[endpointID] = nil
    }

    /// When the next receiver's lifetime ends, if nothing is heard of it before; nil with none listed.
    public var nextExpiry: Instant? {
        receivers.values.map { $0.lastHeard + $0.lifetime }.min()
    }

    /// Drops the receivers not heard within their lifetime at `now`, and gives them.
    public mutating func expire(at now: Instant) -> [Receiver] {
        let gone = receivers.values.filter { now - $0.lastHeard >= $0.lifetime }
        for receiver in gone { receivers[receiver.endpointID] = nil }
        return gone
    }
}
