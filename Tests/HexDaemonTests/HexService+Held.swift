import Foundation

@testable import HexDaemon

extension HexService {
    /// Runs `body` while the store's thread is held, as a commit waiting for the disk holds it; the
    /// thread is let go however `body` ends.
    nonisolated func held(during body: () async throws -> Void) async rethrows {
        let release = DispatchSemaphore(value: 0)
        let (started, holding) = AsyncStream.makeStream(of: Void.self)
        Task { await self.hold(until: release) { holding.yield() } }
        for await _ in started { break }
        defer { release.signal() }
        try await body()
    }

    /// Blocks the store's thread until `release` is signalled, having said it began.
    private func hold(until release: DispatchSemaphore, once started: @Sendable () -> Void) {
        started()
        release.wait()
    }
}
