import HexCommandLine
import HexKit
import HexNet

/// Where and how often hexd announces itself, and how many peers it keeps: read by discovery,
/// the peer directory and the DNS-SD responder, so that one setting says where every kind of
/// announcement goes.
public struct DiscoverySettings: Sendable, Equatable {
    /// The UDP port beacons go to and are heard on.
    public var port = DefaultPorts.discovery
    /// Where beacons go; empty means 255.255.255.255 plus each interface's broadcast address (from
    /// its prefix when it has none), read afresh on every round.
    public var broadcastAddresses: [IPv4Address] = []
    /// The interfaces beacons go out on (`--interface`, `--exclude-interface`); all by default.
    public var interfaces = NetworkInterfaces.Selection()
    /// Peers on other subnets, sent beacons by unicast.
    public var staticPeers: [StaticPeer] = []
    public var announceInterval: Duration = .seconds(2)
    /// Peers kept in the table; past it, the one unheard longest (strangers first) makes room.
    public var maximumPeers = 1_024
    /// Beacons taken from one source address per second (bursts of twice as many pass).
    public var beaconRate = 20

    /// A peer on another subnet (`--peer`): a host, and its discovery port when the user gave one.
    public struct StaticPeer: Sendable, Equatable {
        public let host: String
        public let port: UInt16?

        /// Reads `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT`; nil for anything else, an IPv6
        /// address without brackets included (`fd00::2:18520` could be read two ways).
        public init?(_ text: String) {
            guard Endpoint.bracketed(text, defaultPort: DefaultPorts.discovery) == nil else { return nil }
            if let endpoint = Endpoint(parsing: text) {
                (host, port) = (endpoint.host, endpoint.port)
            } else if let endpoint = Endpoint(parsing: text + ":\(DefaultPorts.discovery)") {
                (host, port) = (endpoint.host, nil)
            } else {
                return nil
            }
        }
    }

    public init() {}

    /// Where the static peers' beacons go: each at its port, else at this daemon's discovery port.
    public var staticPeerEndpoints: [Endpoint] { staticPeers.map { Endpoint(host: $0.host, port: $0.port ?? port) } }

    /// Each of its options, declared once (the command line, the config file, the man page).
    package static let declared: [Setting<Self>] = [
        Setting(
            "discovery-port", value: "port", help: "UDP port for discovery beacons. Default: 18520.",
            expected: "a port from 0 to 65535", \.port, parse: { UInt16($0) }),
        Setting(
            "broadcast", value: "address",
            help: "Where beacons go. Default: 255.255.255.255 and every interface's broadcast address "
                + "(the one its prefix gives when it has none).",
            expected: "an IPv4 address", appending: \.broadcastAddresses, parse: IPv4Address.init),
        Setting(
            "interface", value: "name",
            help: "Announce only on this interface (by its broadcast address; then not to 255.255.255.255).",
            expected: "an interface name", appending: \.interfaces.including, parse: { $0 }),
        Setting(
            "exclude-interface", value: "pattern",
            help: "Never announce on interfaces whose name matches this shell pattern (docker*, veth?).",
            expected: "a shell pattern", appending: \.interfaces.excluding, parse: { $0 }),
        Setting(
            "peer", value: "host[:port]",
            help: "A peer on another subnet: beacons go to its discovery port by unicast (IPv4; an IPv6 address "
                + "is written in brackets, [fd00::2]:18520).",
            expected: "HOST, HOST:PORT, [IPV6] or [IPV6]:PORT", appending: \.staticPeers,
            parse: StaticPeer.init,
            correction: {
                IPv6Address($0) != nil ? "[\($0)]" : Endpoint.bracketed($0, defaultPort: DefaultPorts.discovery)
            }),
        Setting(
            "announce-interval", value: "seconds",
            help: "Seconds between beacons, 0.1 to 600. Default: 2. A peer is lost after 3 missed intervals. "
                + "With more than 16 peers, longer in proportion (status shows it).",
            expected: "seconds from \(Beacon.intervalRange.lowerBound) to \(Beacon.intervalRange.upperBound)",
            \.announceInterval,
            parse: { Double($0).flatMap { Duration.seconds(validating: $0, in: Beacon.intervalRange) } }),
        .count(
            "max-peers", in: 1...1_000_000,
            help: "Peers kept in the table; past it, the one unheard longest makes room "
                + "(peers hexes were exchanged with last). Default: 1024.", \.maximumPeers),
        .count(
            "beacon-rate", in: 1...100_000,
            help: "Discovery beacons taken from one sender (a peer at an address) "
                + "per second, bursts of twice as many; one address may send 16 times as many datagrams, all 64 "
                + "times. Default: 20.", \.beaconRate),
    ]
}
