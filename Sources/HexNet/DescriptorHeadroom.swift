import Glibc

/// The descriptors an accepted connection may never take: one that would is closed at once, and
/// the accept fails as at the limit (EMFILE), so that the listener backs off as it would there.
///
/// The rest of the process needs them while connections flood in: the database and its journal,
/// outgoing connections, and libdispatch, which ends the process (SIGILL, "registered worker
/// exited prematurely") when its once-a-second look at its worker threads cannot open
/// `/proc/<tid>/stat`. The kernel hands out the lowest free descriptor, so an accepted one
/// numbered within `kept` of the limit means fewer than `kept` are free.
public enum DescriptorHeadroom {
    /// How many descriptors accepts leave free.
    public static let kept = 32

    /// Whether a connection accepted on `descriptor` leaves `kept` free under the limit now.
    static func allows(_ descriptor: Int32) -> Bool {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, descriptor >= 0 else {
            return true
        }
        return rlim_t(descriptor) + rlim_t(kept) < limit.rlim_cur
    }
}
