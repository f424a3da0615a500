import Glibc

/// The machine's network interfaces, read afresh on each call (interfaces come and go).
public enum NetworkInterfaces {
    /// The directed broadcast address of every IPv4 interface that is up and not loopback,
    /// without repeats. An address set up without one (`ip addr add 10.77.0.1/24`, no `brd`)
    /// gets the one its prefix gives (10.77.0.255); a /31 or /32, which has none, is left out,
    /// and so is any that would be the interface's own address.
    public static func broadcastAddresses() -> [IPv4Address] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [IPv4Address] = []
        var current = first
        while let interface = current?.pointee {
            current = interface.ifa_next
            let flags = Int32(bitPattern: interface.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = ipv4(interface.ifa_addr), let netmask = ipv4(interface.ifa_netmask)
            else { continue }
            let given = flags & Int32(IFF_BROADCAST) != 0 ? ipv4(interface.ifa_ifu.ifu_broadaddr) : nil
            guard let broadcast = directedBroadcast(address: address, netmask: netmask, given: given),
                  !addresses.contains(broadcast) else { continue }
            addresses.append(broadcast)
        }
        return addresses
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
