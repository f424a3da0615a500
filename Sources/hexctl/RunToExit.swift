import Glibc

/// Runs `command` on the global concurrent executor, where it ends the process itself (`exit`);
/// the calling thread, hexctl's main thread, only waits.
///
/// hexctl's top level stays synchronous for it. With a top-level `await`, the main thread would
/// hand itself to `dispatchMain()`, which ends it with `pthread_exit`, and glibc then loads
/// libgcc_s to unwind it; and were the main thread woken to call `exit` once the command is
/// done, that wake-up would be on the way out of every command.
func runToExit(_ command: @escaping @Sendable () async -> Never) -> Never {
    // Detached: a task made here would otherwise belong to the main actor, whose queue only a
    // main thread that is not waiting can run.
    Task.detached { await command() }
    while true { pause() }
}
