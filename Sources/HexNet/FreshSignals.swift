import Glibc

/// Spawn attributes that give a child signals as a fresh process has them: none blocked, each at
/// its default. The spawning thread may block some (dispatch's threads do) and the daemon ignores
/// SIGPIPE; a child that kept a blocked SIGTERM would never stop at its timeout.
public enum FreshSignals {
    /// Sets `attributes`' signal mask and defaults; returns the flags that make them count, to add
    /// to the others given to `posix_spawnattr_setflags`.
    public static func apply(to attributes: inout posix_spawnattr_t) -> Int16 {
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        return Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
    }
}
