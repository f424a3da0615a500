import Glibc

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

    private static let descriptorResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
