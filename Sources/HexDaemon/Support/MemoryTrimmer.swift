import CLinux
import Synchronization

/// Hands freed memory back to the system after a burst: connections that end (their TLS state,
/// a 95 KB client certificate, buffers of unfinished lines) go back to malloc, which keeps much
/// of it resident (fragmented arenas). Once a burst was reported, this trims every arena when
/// reports stop for `quiet` (the burst is over), or `interval` after the first one while they go
/// on, so the daemon's memory falls back within seconds of an attack instead of staying at its
/// peak, and a steady trickle of connections costs one trim per `interval`.
final class MemoryTrimmer: DaemonService {
    let quiet: Duration
    let interval: Duration
    private let pending = Atomic(false)
    /// Reports so far: a count that moved during `quiet` means the burst goes on.
    private let reports = Atomic(0)
    /// Wakes the trimmer for a burst: without one, it sleeps without a timer.
    private let bursts = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(quiet: Duration = .seconds(1), interval: Duration = .seconds(10)) {
        self.quiet = quiet
        self.interval = interval
    }

    /// Notes that a burst of memory was freed.
    func burstFreed() {
        reports.add(1, ordering: .relaxed)
        if !pending.exchange(true, ordering: .relaxed) { bursts.continuation.yield() }
    }

    /// Trims once after each reported burst (what else is freed meanwhile goes with it), until
    /// cancelled.
    func run() async {
        for await _ in bursts.stream {
            let first = ContinuousClock.now
            var seen = reports.load(ordering: .relaxed)
            while true {
                guard (try? await Task.sleep(for: quiet)) != nil else { return }
                let now = reports.load(ordering: .relaxed)
                if now == seen || ContinuousClock.now - first >= interval { break }
                seen = now
            }
            if pending.exchange(false, ordering: .relaxed) { hexd_trim_memory() }
        }
    }
}
