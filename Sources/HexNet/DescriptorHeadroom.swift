import Glibc

/// The descriptors that new work may never take: a descriptor that would is closed at once, and
/// the call fails as at the limit (EMFILE), so that its caller backs off or reports it as it would
/// there.
///
/// The rest of the process needs them while connections flood in: the database and its journal,
/// and libdispatch, which ends the process (SIGILL, "registered worker exited prematurely") when
/// its once-a-second look at its worker threads cannot open `/proc/<tid>/stat`. The kernel hands
/// out the lowest free descriptor, so a new one numbered within `kept` of the limit means fewer
/// than `kept` are free.
///
/// Two tiers. Every accept from the network, every socket the daemon opens and every file it opens
/// for a transfer (`DiskFile`) leaves `kept` free: a stranger can make it accept, announce a device
/// it then registers with, or offer files. What the user asked for goes further and leaves only
/// `keptByOwnWork`: a client of the control socket (`hexctl`) and a connection the outbox opens to
/// send a hex, so that the user is still served while strangers hold everything else, and the last
/// ones stay for what is not counted (SQLite's files, a receive hook's pipes) and libdispatch.
public enum DescriptorHeadroom {
    /// How many descriptors accepts, sockets and transfer files leave free.
    public static let kept = 32
    /// How many descriptors the user's own work leaves free.
    public static let keptByOwnWork = 16

    /// Whether a new descriptor `descriptor` leaves `kept` (or `keeping`) free under the process's
    /// limit now.
    static func allows(_ descriptor: Int32, keeping: Int = kept) -> Bool {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return true }
        return allows(descriptor, keeping: keeping, under: limit.rlim_cur)
    }

    /// Whether descriptor `descriptor` leaves `keeping` (not negative) free under a limit of
    /// `limit` descriptors.
    static func allows(_ descriptor: Int32, keeping: Int, under limit: rlim_t) -> Bool {
        guard descriptor >= 0 else { return true }
        return rlim_t(descriptor) + rlim_t(clamping: keeping) < limit
    }

    /// Why a new descriptor was refused, for its error.
    static func refusal(keeping: Int) -> String {
        "it would leave fewer than \(keeping) descriptors free"
    }
}
