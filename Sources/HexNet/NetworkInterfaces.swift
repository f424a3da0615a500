import Glibc

/// The machine's network interfaces, read afresh on each call (interfaces come and go).
public enum NetworkInterfaces {
    /// One IPv4 address of an interface, as the system lists it.
    public struct Address: Sendable, Equatable {
        public let interface: String
        public let address: IPv4Address
        public let netmask: IPv4Address
        /// The broadcast address the interface was given, if any.
        public let broadcast: IPv4Address?
        public let isUp: Bool
        public let isLoopback: Bool

        public init(interface: String, address: IPv4Address, netmask: IPv4Address, broadcast: IPv4Address?,
                    isUp: Bool = true, isLoopback: Bool = false) {
            self.interface = interface
            self.address = address
            self.netmask = netmask
            self.broadcast = broadcast
            self.isUp = isUp
            self.isLoopback = isLoopback
        }
    }

    /// Which interfaces beacons go out on: every one by default; with `including`, only those
    /// named; never one whose name matches a pattern of `excluding` (shell globs: `docker*`).
    public struct Selection: Sendable, Equatable {
        public var including: [String]
        public var excluding: [String]

        public init(including: [String] = [], excluding: [String] = []) {
            self.including = including
            self.excluding = excluding
        }
    }

    /// An interface address, and where its beacons go or why none do.
    public struct Target: Sendable, Equatable {
        public let interface: String
        public let address: IPv4Address
        /// Where beacons go for it; nil when it is skipped.
        public let broadcast: IPv4Address?
        /// Why it is skipped; nil when beacons go out on it.
        public let skipped: String?
    }

    /// Every IPv4 address of every interface, in the system's order.
    public static func addresses() -> [Address] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [Address] = []
        var current = first
        while let interface = current?.pointee {
            current = interface.ifa_next
            let flags = Int32(bitPattern: interface.ifa_flags)
            guard let address = ipv4(interface.ifa_addr), let netmask = ipv4(interface.ifa_netmask) else { continue }
            let name = interface.ifa_name.map { String(cString: $0) } ?? "?"
            let given = flags & Int32(IFF_BROADCAST) != 0 ? ipv4(interface.ifa_ifu.ifu_broadaddr) : nil
            addresses.append(Address(interface: name, address: address, netmask: netmask, broadcast: given,
                                     isUp: flags & Int32(IFF_UP) != 0, isLoopback: flags & Int32(IFF_LOOPBACK) != 0))
        }
        return addresses
    }

    /// Where beacons go for each of `addresses`, or why they do not: an interface that is down,
    /// loopback, not selected, or whose subnet has no broadcast address (a /31 or /32) is
    /// skipped, and so is a broadcast address another interface already covers. An address set up
    /// without a broadcast address (`ip addr add 10.77.0.1/24`, no `brd`) gets the one its prefix
    /// gives (10.77.0.255), never the interface's own address.
    public static func targets(of addresses: [Address], selection: Selection) -> [Target] {
        var targets: [Target] = []
        for address in addresses {
            let broadcast = directedBroadcast(address: address.address, netmask: address.netmask,
                                              given: address.broadcast)
            let covered = targets.first { $0.broadcast != nil && $0.broadcast == broadcast }
            let skipped: String? = if !address.isUp {
                "down"
            } else if address.isLoopback {
                "loopback"
            } else if let pattern = selection.excluding.first(where: { matches($0, address.interface) }) {
                "excluded by '\(pattern)'"
            } else if !selection.including.isEmpty && !selection.including.contains(address.interface) {
                "not among the interfaces named"
            } else if broadcast == nil {
                "a /31 or /32 subnet has no broadcast address"
            } else if let covered {
                "its broadcast address is \(covered.interface)'s"
            } else {
                nil
            }
            targets.append(Target(interface: address.interface, address: address.address,
                                  broadcast: skipped == nil ? broadcast : nil, skipped: skipped))
        }
        return targets
    }

    /// Whether `name` matches the shell glob `pattern` (`*`, `?`, `[...]`).
    static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }

    /// The broadcast address of `address`'s subnet: the one the interface gives, unless it is
    /// missing, 0.0.0.0 or the address itself; else the subnet's highest address. Nil for a
    /// subnet of one or two addresses (/31, /32), which has none.
    static func directedBroadcast(address: IPv4Address, netmask: IPv4Address, given: IPv4Address?) -> IPv4Address? {
        if let given, given != .any, given != address { return given }
        let mask = UInt32(bigEndian: netmask.networkOrder)
        guard mask.nonzeroBitCount < 31 else { return nil }
        let host = UInt32(bigEndian: address.networkOrder)
        return IPv4Address(networkOrder: (host | ~mask).bigEndian)
    }

    private static func ipv4(_ pointer: UnsafeMutablePointer<sockaddr>?) -> IPv4Address? {
        guard let pointer, pointer.pointee.sa_family == sa_family_t(AF_INET) else { return nil }
        return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { IPv4Address($0.pointee.sin_addr) }
    }
}
