import Glibc
import HexCarrier
import HexNet

/// The process's limit on open file descriptors, which bounds how many connections it can hold.
enum DescriptorLimit {
    /// Raises the soft limit to the hard one (a daemon should use what it is allowed) and returns
    /// the soft limit in force afterwards.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(descriptorResource, &limit) == 0 else { return 1_024 }
        // An unlimited hard limit is capped: the kernel's own maximum applies anyway.
        let target = min(limit.rlim_max, rlim_t(1 << 20))
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(descriptorResource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Descriptors kept back from connections: the database and its journal, the listeners, the
    /// lock, pipes of link commands, and whatever libraries open.
    static let reserve = 64

    /// The peer connections `limit` leaves room for: past the reserve, the descriptors accepts
    /// leave free, and the connections a full table is closing for newcomers (`ConnectionSlots`).
    static func connections(_ limit: Int) -> Int {
        max(1, limit - reserve - DescriptorHeadroom.kept - ConnectionSlots.beyondCap)
    }

    /// The least limit hexd starts under: its own descriptors, the reserve, the descriptors every
    /// accept leaves free (`DescriptorHeadroom`) and room for a few connections. Below it, the
    /// process would run out of descriptors by itself, which libdispatch does not survive.
    static let minimum = 128

    private static let descriptorResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
