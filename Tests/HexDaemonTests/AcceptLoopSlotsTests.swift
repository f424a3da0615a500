import HexCarrier
import HexNet
import HexTestSupport
import Synchronization
import Testing

/// An accept loop holds at most its slots' worth of connections, from before their accept to the
/// end of their tasks: a flood waits in the kernel's backlog instead of taking a descriptor each.
/// Before, a table that closed its stalest connection to make room let the loop accept on while the
/// closed ones were still ending, until the process ran out of descriptors (and libdispatch ended
/// it).
@Suite struct AcceptLoopSlotsTests {
    /// What the connections' tasks saw, and when they may end.
    private final class Served: Sendable {
        private struct Counts {
            var now = 0
            var most = 0
            var total = 0
        }

        private let counts = Mutex(Counts())
        private let released = Mutex(false)

        var now: Int { counts.withLock(\.now) }
        var most: Int { counts.withLock(\.most) }
        var total: Int { counts.withLock(\.total) }

        func release() { released.withLock { $0 = true } }

        /// Counts a connection served until `release`.
        func serve() async {
            counts.withLock { counts in
                counts.now += 1
                counts.most = max(counts.most, counts.now)
                counts.total += 1
            }
            while !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            counts.withLock { $0.now -= 1 }
        }
    }

    @Test func twoListenersSharingSlotsServeNoMoreThanTheSlotsAtOnce() async throws {
        let listeners = [
            try StreamListener.tcp(address: .loopback, port: 0), try StreamListener.tcp(address: .loopback, port: 0),
        ]
        let slots = ConnectionSlots(maximum: 4)
        let served = Served()
        let loops = listeners.map { listener in
            Task {
                await acceptConnections(on: listener, slots: slots, logger: Logger(level: .error)) { _, _ in
                    await served.serve()
                }
            }
        }
        defer { loops.forEach { $0.cancel() } }
        var clients: [Socket] = []
        for listener in listeners {
            for _ in 0..<10 {
                let endpoint = Endpoint(host: "127.0.0.1", port: listener.port)
                clients.append(try await StreamConnector.tcp(to: endpoint, timeout: .seconds(10)))
            }
        }
        // Two loops waiting in accept hold two slots: two connections are served, then three or four.
        try await waitUntil("the slots are taken", timeout: .seconds(30)) { served.now >= 2 }
        // Given the time to accept more, the loops do not.
        try await Task.sleep(for: .milliseconds(200))
        #expect(served.now <= 4)
        served.release()
        try await waitUntil("the others are served as the first end", timeout: .seconds(30)) { served.total == 20 }
        #expect(served.most <= 4, "\(served.most) connections served at once with 4 slots")
        withExtendedLifetime(clients) {}
    }

    @Test func aConnectionRefusedGivesItsSlotBack() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let slots = ConnectionSlots(maximum: 1)
        let served = Served()
        served.release()
        let refused = Mutex(0)
        let admit = { (_: Socket) -> Bool in
            refused.withLock { refused in
                guard refused < 5 else { return true }
                refused += 1
                return false
            }
        }
        let loop = Task {
            await acceptConnections(on: listener, slots: slots, logger: Logger(level: .error), admit: admit) { _, _ in
                await served.serve()
            }
        }
        defer { loop.cancel() }
        let endpoint = Endpoint(host: "127.0.0.1", port: listener.port)
        var clients: [Socket] = []
        for _ in 0..<8 { clients.append(try await StreamConnector.tcp(to: endpoint, timeout: .seconds(10))) }
        try await waitUntil("the three admitted are served, one slot between them", timeout: .seconds(30)) {
            served.total == 3
        }
        #expect(refused.withLock { $0 } == 5)
        withExtendedLifetime(clients) {}
    }

    @Test func aLoopWaitingForASlotEndsWhenCancelled() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let slots = ConnectionSlots(maximum: 1)
        // The one slot held here: the loop waits for it.
        #expect(await slots.take())
        let loop = Task {
            await acceptConnections(on: listener, slots: slots, logger: Logger(level: .error)) { _, _ in }
        }
        let ended = Mutex(false)
        let watching = Task {
            await loop.value
            ended.withLock { $0 = true }
        }
        loop.cancel()
        // Given back however the wait ends, so that a loop that missed its cancellation ends too.
        defer { slots.give() }
        try await waitUntil("the loop ends, its wait for a slot cancelled", timeout: .seconds(30)) {
            ended.withLock { $0 }
        }
        await watching.value
    }
}
