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

        public init(
            interface: String, address: IPv4Address, netmask: IPv4Address, broadcast: IPv4Address?,
            isUp: Bool = true, isLoopback: Bool = false
        ) {
            self.interface = interface
            self.address = address
            self.netmask = netmask
            self.broadcast = broadcast
            self.isUp = isUp
            self.isLoopback = isLoopback
        }

        /// The broadcast address of its subnet (the one given, else the subnet's highest); nil for
        /// a /31 or /32.
        public var subnetBroadcast: IPv4Address? {
            NetworkInterfaces.directedBroadcast(address: address, netmask: netmask, given: broadcast)
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
        public let address: IPAddress
        /// Where beacons go for it (a broadcast address, or hexd's IPv6 group on the interface);
        /// nil when it is skipped.
        public let broadcast: IPAddress?
        /// Why it is skipped; nil when beacons go out on it.
        public let skipped: String?

        public init(interface: String, address: IPAddress, broadcast: IPAddress?, skipped: String? = nil) {
            self.interface = interface
            self.address = address
            self.broadcast = broadcast
            self.skipped = skipped
        }
    }

    /// An interface with an IPv6 link-local address: a link IPv6 beacons can go out on.
    public struct IPv6Link: Sendable, Equatable {
        public let interface: String
        public let index: UInt32
        /// Its link-local address (with its scope).
        public let address: IPv6Address
        public let isUp: Bool
        public let isLoopback: Bool
        public let isMulticast: Bool

        public init(
            interface: String, index: UInt32, address: IPv6Address, isUp: Bool = true,
            isLoopback: Bool = false, isMulticast: Bool = true
        ) {
            self.interface = interface
            self.index = index
            self.address = address
            self.isUp = isUp
            self.isLoopback = isLoopback
            self.isMulticast = isMulticast
        }
    }

    /// An IPv6 address of an interface, with its prefix: the addresses on that link.
    public struct IPv6Prefix: Sendable, Equatable {
        public let interface: String
        public let index: UInt32
        public let address: IPv6Address
        /// The prefix's length in bits, 0–128.
        public let length: Int

        public init(interface: String, index: UInt32, address: IPv6Address, length: Int) {
            self.interface = interface
            self.index = index
            self.address = address
            self.length = length
        }

        /// Whether `other` is on this prefix's link by its address: within the prefix.
        public func contains(_ other: IPv6Address) -> Bool { other.sharesPrefix(of: length, with: address) }
    }

    /// Every IPv4 address of every interface, in the system's order.
    public static func addresses() -> [Address] {
        var addresses: [Address] = []
        eachInterfaceAddress { interface in
            let flags = Int32(bitPattern: interface.ifa_flags)
            guard let address = ipv4(interface.ifa_addr), let netmask = ipv4(interface.ifa_netmask) else { return }
            let name = interface.ifa_name.map { String(cString: $0) } ?? "?"
            let given = flags & Int32(IFF_BROADCAST) != 0 ? ipv4(interface.ifa_ifu.ifu_broadaddr) : nil
            addresses.append(
                Address(
                    interface: name, address: address, netmask: netmask, broadcast: given,
                    isUp: flags & Int32(IFF_UP) != 0, isLoopback: flags & Int32(IFF_LOOPBACK) != 0))
        }
        return addresses
    }

    /// Whether IPv6 is turned off on this host (`net.ipv6.conf.all.disable_ipv6`, in this network
    /// namespace): its sockets can still be made, but no interface has an IPv6 address.
    public static var isIPv6TurnedOff: Bool {
        let descriptor = open("/proc/sys/net/ipv6/conf/all/disable_ipv6", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var byte: UInt8 = 0
        return read(descriptor, &byte, 1) == 1 && byte == UInt8(ascii: "1")
    }

    /// Every interface with an IPv6 link-local address, its first one, in the system's order.
    public static func ipv6Links() -> [IPv6Link] {
        var links: [IPv6Link] = []
        eachInterfaceAddress { interface in
            guard let address = ipv6(interface.ifa_addr) else { return }
            let name = interface.ifa_name.map { String(cString: $0) } ?? "?"
            guard address.isLinkLocal, address.scope != 0, !links.contains(where: { $0.interface == name }) else {
                return
            }
            let flags = Int32(bitPattern: interface.ifa_flags)
            links.append(
                IPv6Link(
                    interface: name, index: address.scope, address: address,
                    isUp: flags & Int32(IFF_UP) != 0, isLoopback: flags & Int32(IFF_LOOPBACK) != 0,
                    isMulticast: flags & Int32(IFF_MULTICAST) != 0))
        }
        return links
    }

    /// Every IPv6 address of every interface that is up, with its prefix, in the system's order.
    public static func ipv6Prefixes() -> [IPv6Prefix] {
        var prefixes: [IPv6Prefix] = []
        eachInterfaceAddress { interface in
            guard Int32(bitPattern: interface.ifa_flags) & Int32(IFF_UP) != 0,
                let address = ipv6(interface.ifa_addr), let netmask = ipv6(interface.ifa_netmask)
            else { return }
            let name = interface.ifa_name.map { String(cString: $0) } ?? "?"
            // A netmask is leading ones: their count is the prefix's length.
            let length = netmask.bytes.reduce(0) { $0 + $1.nonzeroBitCount }
            prefixes.append(
                IPv6Prefix(interface: name, index: if_nametoindex(name), address: address, length: length))
        }
        return prefixes
    }

    /// Where IPv6 beacons go for each of `links` (`group` on that interface), or why they do not:
    /// a link that is down, loopback, without multicast, or not selected is skipped.
    public static func multicastTargets(of links: [IPv6Link], group: IPv6Address, selection: Selection) -> [Target] {
        links.map { link in
            let skipped: String? =
                if !link.isUp {
                    "down"
                } else if link.isLoopback {
                    "loopback"
                } else if !link.isMulticast {
                    "no multicast"
                } else if let pattern = selection.excluding.first(where: { matches($0, link.interface) }) {
                    "excluded by '\(pattern)'"
                } else if !selection.including.isEmpty && !selection.including.contains(link.interface) {
                    "not among the interfaces named"
                } else {
                    nil
                }
            let destination = IPAddress.v6(IPv6Address(bytes: group.bytes, scope: link.index))
            return Target(
                interface: link.interface, address: .v6(link.address),
                broadcast: skipped == nil ? destination : nil, skipped: skipped)
        }
    }

    /// Where beacons go for each of `addresses`, or why they do not: an interface that is down,
    /// loopback, not selected, or whose subnet has no broadcast address (a /31 or /32) is
    /// skipped, and so is a broadcast address another interface already covers. An address set up
    /// without a broadcast address (`ip addr add 10.77.0.1/24`, no `brd`) gets the one its prefix
    /// gives (10.77.0.255), never the interface's own address.
    public static func targets(of addresses: [Address], selection: Selection) -> [Target] {
        var targets: [Target] = []
        for address in addresses {
            let broadcast = directedBroadcast(
                address: address.address, netmask: address.netmask,
                given: address.broadcast)
            let covered = targets.first { $0.broadcast != nil && $0.broadcast == broadcast.map(IPAddress.v4) }
            let skipped: String? =
                if !address.isUp {
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
            targets.append(
                Target(
                    interface: address.interface, address: .v4(address.address),
                    broadcast: skipped == nil ? broadcast.map(IPAddress.v4) : nil, skipped: skipped))
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

    /// Calls `body` with each entry of the system's list of interface addresses, in its order;
    /// with none when the list cannot be read.
    private static func eachInterfaceAddress(_ body: (ifaddrs) -> Void) {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return }
        defer { freeifaddrs(first) }
        var current = first
        while let interface = current?.pointee {
            current = interface.ifa_next
            body(interface)
        }
    }

    private static func ipv6(_ pointer: UnsafeMutablePointer<sockaddr>?) -> IPv6Address? {
        guard let pointer, pointer.pointee.sa_family == sa_family_t(AF_INET6) else { return nil }
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { IPv6Address($0.pointee) }
    }

    private static func ipv4(_ pointer: UnsafeMutablePointer<sockaddr>?) -> IPv4Address? {
        guard let pointer, pointer.pointee.sa_family == sa_family_t(AF_INET) else { return nil }
        return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { IPv4Address($0.pointee.sin_addr) }
    }
}
