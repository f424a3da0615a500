import HexCarrier
import HexNet
import HexTestSupport
import Synchronization
import Testing

/// An accept loop holds at most its slots' worth of connections, from accept to the end of their
/// tasks: a flood waits in the kernel's backlog instead of taking a descriptor each. Before, a
/// table that closed its stalest connection to make room let the loop accept on while the closed
/// ones were still ending, until the process ran out of descriptors (and libdispatch ended it).
@Suite struct AcceptLoopSlotsTests {
    private struct Served {
        var now = 0
        var most = 0
        var total = 0
    }

    @Test func aFloodWaitsInTheBacklogWhileEverySlotIsTaken() async throws {
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let slots = ConnectionSlots(maximum: 3)
        let served = Mutex(Served())
        let release = Mutex(false)
        let loop = Task {
            await acceptConnections(on: listener, slots: slots, logger: Logger(level: .error)) { _ in
                served.withLock { served in
                    served.now += 1
                    served.most = max(served.most, served.now)
                    served.total += 1
                }
                while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
                served.withLock { $0.now -= 1 }
            }
        }
        defer { loop.cancel() }
        let endpoint = Endpoint(host: "127.0.0.1", port: listener.port)
        var clients: [Socket] = []
        for _ in 0..<10 { clients.append(try await StreamConnector.tcp(to: endpoint, timeout: .seconds(10))) }
        try await waitUntil("three connections are served", timeout: .seconds(30)) {
            served.withLock { $0.now } == 3
        }
        // Given the time to accept more, the loop does not.
        try await Task.sleep(for: .milliseconds(200))
        #expect(served.withLock { $0.total } == 3)
        release.withLock { $0 = true }
        try await waitUntil("the other seven are served as the first end", timeout: .seconds(30)) {
            served.withLock { $0.total } == 10
        }
        #expect(served.withLock { $0.most } == 3, "never more than the slots at once")
        withExtendedLifetime(clients) {}
    }
}
