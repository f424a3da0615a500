import CLinux
import Synchronization

/// Hands freed memory back to the system after a burst: when connections holding large
/// unfinished lines are cut off, their buffers go back to malloc, which keeps much of it resident
/// (fragmented arenas). At most once per `interval`, and only after a burst was reported, this
/// trims every arena, so the daemon's memory falls back after an attack instead of staying at its
/// peak.
final class MemoryTrimmer: DaemonService {
    let interval: Duration
    private let pending = Atomic(false)

    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Notes that a burst of memory was freed.
    func burstFreed() {
        pending.store(true, ordering: .relaxed)
    }

    /// Trims after each reported burst, until cancelled.
    func run() async {
        while (try? await Task.sleep(for: interval)) != nil {
            if pending.exchange(false, ordering: .relaxed) { hexd_trim_memory() }
        }
    }
}
