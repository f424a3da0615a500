import Glibc

/// The machine's network interfaces, read afresh on each call (interfaces come and go).
public enum NetworkInterfaces {
    /// The directed broadcast address of every IPv4 interface that is up and can broadcast
    /// (loopback has none), without repeats.
    public static func broadcastAddresses() -> [IPv4Address] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [IPv4Address] = []
        var current = first
        while let interface = current?.pointee {
            current = interface.ifa_next
            let flags = Int32(bitPattern: interface.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_BROADCAST) != 0,
                  let address = interface.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  let broadcast = interface.ifa_ifu.ifu_broadaddr
            else { continue }
            let inet = broadcast.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { IPv4Address($0.pointee.sin_addr) }
            if !addresses.contains(inet) { addresses.append(inet) }
        }
        return addresses
    }
}
