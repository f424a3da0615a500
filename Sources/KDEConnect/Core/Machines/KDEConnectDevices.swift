import HexEngine

/// The KDE Connect devices with a link up, the pairing of each, and when either ends by itself.
///
/// - A device may hold up to `linksPerDevice` links: one that dials again replaces its link and
///   closes the old one itself (22.12 within milliseconds). The newest link is the device's; when it
///   ends, the next newest still up takes over.
/// - A link claiming a device whose link up proved another certificate is refused: anyone can put
///   any device ID in a certificate of their own.
/// - A link whose pairing was read from the store before the pairings there changed
///   (`trustChanged`) is refused: it would hold a stale answer (the device reconnects).
/// - A device whose last link ended is gone only when none is back within `leaveGrace`: a device
///   that dials again closes its old link, sometimes before its new one is up.
/// - A pairing lives while its device has a link, and through its grace: it goes with the device (a
///   request in progress too, as the apps' does). A device back within the grace keeps its pairing
///   only when it shows the certificate it left with and the store's pairings did not change
///   meanwhile; else its pairing starts over as the store says. A request unanswered for
///   `KDEConnectPairing.requestLifetime` ends at `deadline`.
///
/// Pure: the driver passes the time in, keeps its own handle on each link (`Link`), and performs
/// what `tick` returns at `deadline`.
public struct KDEConnectDevices<Link: Sendable>: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// Why a link is not taken.
    public enum Refusal: Error, Sendable, Equatable {
        /// Its device has `linksPerDevice` links up already.
        case tooManyLinks
        /// Its pairing was read before the store's pairings changed.
        case trustChanged
        /// Its certificate is not the one of its device's link up.
        case impostor
    }

    /// What the clock brought.
    public enum Event: Sendable {
        /// The device's last link ended `leaveGrace` ago and none is back: it is gone, its pairing
        /// (a request in progress) with it. `last` is its last link.
        case gone(key: String, last: Link)
        /// The device's pairing request ended unanswered: what its pairing decided, to perform on
        /// `link`, the device's newest.
        case pairing(key: String, link: Link, [KDEConnectPairing.Action])
    }

    /// Links of one device kept at once.
    public static var linksPerDevice: Int { 4 }
    /// How long a device whose last link ended may take to link again before it is gone.
    public static var leaveGrace: Duration { .milliseconds(500) }

    private struct Entry: Sendable {
        let link: Link
        let certificate: String
    }

    /// The links up, by device key, each by its number (the newest is the device's).
    private var open: [String: [Int: Entry]] = [:]
    /// The pairing of each device with a link up, by device key.
    private var pairings: [String: KDEConnectPairing] = [:]
    /// The devices whose last link ended, by key: when they are gone, and that link.
    private var leaving: [String: (at: Instant, last: Entry)] = [:]
    private var lastNumber = 0

    /// Counts the changes of what the store holds paired; a link's pairing read at another count is
    /// stale.
    public private(set) var trustGeneration = 0

    public init() {}

    /// The newest link of each device, the latest linked first.
    public var newestLinks: [(key: String, link: Link)] {
        let newest = open.compactMap { key, links in
            links.max { $0.key < $1.key }.map { (key: key, number: $0.key, link: $0.value.link) }
        }
        return newest.sorted { $0.number > $1.number }.map { ($0.key, $0.link) }
    }

    /// Every link up, of every device.
    public var allLinks: [(key: String, link: Link)] {
        open.flatMap { key, links in links.values.map { (key, $0.link) } }
    }

    /// The device's newest link; nil when it has none up.
    public func newestLink(of key: String) -> Link? {
        open[key]?.max { $0.key < $1.key }?.value.link
    }

    /// The device's pairing while it has a link up or is within its grace. Set, it is kept only
    /// then (a pairing written back after its device is gone is dropped, as the device's was).
    public subscript(pairing key: String) -> KDEConnectPairing? {
        get { pairings[key] }
        set {
            guard pairings[key] != nil, let newValue else { return }
            pairings[key] = newValue
        }
    }

    /// Whether the device has a link up and is paired.
    public func isPaired(_ key: String) -> Bool { open[key] != nil && pairings[key]?.isPaired == true }

    /// The pairings of the store changed (a device paired or unpaired): links whose pairing was
    /// read before are refused, and the devices within their grace start over as the store says
    /// when they are back.
    public mutating func trustChanged() {
        trustGeneration += 1
        for key in leaving.keys { pairings[key] = nil }
    }

    /// Whether a link whose handshake proved the device `key` with `certificate` may be taken, its
    /// pairing read from the store at `generation`.
    public func check(_ key: String, certificate: String, readAt generation: Int) -> Refusal? {
        guard generation == trustGeneration else { return .trustChanged }
        let links = open[key] ?? [:]
        guard links.count < Self.linksPerDevice else { return .tooManyLinks }
        if let newest = links.max(by: { $0.key < $1.key })?.value, newest.certificate != certificate {
            return .impostor
        }
        return nil
    }

    /// Takes a link `check` allowed: the device's newest now, its pairing begun (paired as the store
    /// said) unless it has one, at `version`.
    /// - Returns: the link's number, for `ended`, and whether the device arrived (it had no link up
    ///   and was not leaving).
    public mutating func add(
        _ link: Link, of key: String, certificate: String, version: Int, paired: Bool
    ) -> (number: Int, arrived: Bool) {
        let returning = leaving.removeValue(forKey: key)
        let arrived = open[key] == nil && returning == nil
        // Back with another certificate: whatever it asked or was is not this one's.
        if let returning, returning.last.certificate != certificate { pairings[key] = nil }
        lastNumber += 1
        open[key, default: [:]][lastNumber] = Entry(link: link, certificate: certificate)
        var pairing = pairings[key] ?? KDEConnectPairing(paired: paired, version: version)
        pairing.version = version
        pairings[key] = pairing
        return (lastNumber, arrived)
    }

    /// The link `number` of the device ended.
    /// - Returns: whether it was the device's last (it is gone at `deadline` unless one is back).
    public mutating func ended(_ key: String, number: Int, at now: Instant) -> Bool {
        guard let entry = open[key]?.removeValue(forKey: number) else { return false }
        guard open[key]?.isEmpty == true else { return false }
        open[key] = nil
        leaving[key] = (now + Self.leaveGrace, entry)
        return true
    }

    /// When `tick` is due next: a device that left is gone, or a pairing request ends.
    public var deadline: Instant? {
        (leaving.values.map(\.at) + pairings.values.compactMap(\.deadline)).min()
    }

    /// The devices gone, and the pairing requests ended unanswered, by `now`.
    public mutating func tick(at now: Instant) -> [Event] {
        var events: [Event] = []
        for (key, left) in leaving where left.at <= now {
            leaving[key] = nil
            pairings[key] = nil
            events.append(.gone(key: key, last: left.last.link))
        }
        for (key, var pairing) in pairings {
            guard let deadline = pairing.deadline, deadline <= now else { continue }
            let actions = pairing.tick(at: now)
            pairings[key] = pairing
            // A device leaving has no link to be told on: its request just ends.
            if let link = newestLink(of: key) { events.append(.pairing(key: key, link: link, actions)) }
        }
        return events
    }
}
