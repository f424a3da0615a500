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
    /// Wakes the trimmer for a burst: without one, it sleeps without a timer.
    private let bursts = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Notes that a burst of memory was freed.
    func burstFreed() {
        if !pending.exchange(true, ordering: .relaxed) { bursts.continuation.yield() }
    }

    /// Trims once `interval` after each reported burst (what else is freed meanwhile goes with
    /// it), until cancelled.
    func run() async {
        for await _ in bursts.stream {
            guard (try? await Task.sleep(for: interval)) != nil else { return }
            if pending.exchange(false, ordering: .relaxed) { hexd_trim_memory() }
        }
    }
}
