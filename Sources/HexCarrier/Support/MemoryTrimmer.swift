import CLinux
import HexEngine
import Synchronization

/// Hands freed memory back to the system after a burst: connections that end (their TLS state,
/// a client certificate read up to its cap, buffers of unfinished lines) go back to malloc, which
/// keeps much of it resident. `TrimSchedule` decides when every arena is trimmed; this performs
/// it, sleeping without a timer while nothing was reported.
package final class MemoryTrimmer: DaemonService {
    private let schedule: Mutex<TrimSchedule>
    /// Wakes the trimmer for a report while it sleeps without a deadline.
    private let reports = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    package init(schedule: TrimSchedule = TrimSchedule()) {
        self.schedule = Mutex(schedule)
    }

    /// Notes that memory was freed (a connection ended, a burst was cut off).
    package func burstFreed() {
        schedule.withLock { $0.reported(at: .now) }
        reports.continuation.yield()
    }

    /// Trims when the schedule says, until cancelled.
    package func run() async {
        for await _ in reports.stream {
            while let deadline = schedule.withLock({ $0.deadline }) {
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                if schedule.withLock({ $0.tick(at: .now) }) { hexd_trim_memory() }
            }
        }
    }
}
