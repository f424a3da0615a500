import Glibc
import Synchronization
import Testing

@testable import HexNet

/// The epoll reactor under the churn that crashed libdispatch's sources: thousands of waits that
/// end every way a wait can end, at once.
@Suite(.timeLimit(.minutes(5))) struct ReactorTests {
    /// A connected pair of Unix stream sockets.
    private func pair() throws -> (Socket, Socket) {
        var descriptors: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
            throw SocketError("socketpair")
        }
        return (Socket(adopting: descriptors[0]), Socket(adopting: descriptors[1]))
    }

    @Test func thousandsOfWaitsEndByReadinessDeadlineOrCancellation() async throws {
        let outcomes = Locked<[String: Int]>([:])
        for round in 0..<4 {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<500 {
                    guard let (near, far) = try? pair() else {
                        Issue.record("no socket pair")
                        return
                    }
                    let kind = (index + round) % 3
                    let waiter = Task {
                        do {
                            try await waitUntil(
                                .readable, descriptor: near.descriptor,
                                timeout: kind == 1 ? .milliseconds(20) : .seconds(30), operation: "test")
                            return "ready"
                        } catch let error as SocketError where error.isTimeout {
                            return "timedOut"
                        } catch is CancellationError {
                            return "cancelled"
                        } catch {
                            return "\(error)"
                        }
                    }
                    group.addTask {
                        switch kind {
                        case 0: _ = far.descriptor == -1 ? 0 : write(far.descriptor, "x", 1)
                        case 2: waiter.cancel()
                        default: break
                        }
                        let outcome = await waiter.value
                        outcomes.withLock { $0[outcome, default: 0] += 1 }
                        withExtendedLifetime((near, far)) {}
                    }
                }
            }
        }
        let counts = outcomes.withLock { $0 }
        #expect(counts.values.reduce(0, +) == 2_000, "every wait ended: \(counts)")
        #expect(Set(counts.keys) == ["ready", "timedOut", "cancelled"], "\(counts)")
    }

    @Test func aReaderAndAWriterWaitOnOneDescriptorAtOnce() async throws {
        let (near, far) = try pair()
        // Fill the send buffer so that writing must wait, while another task waits to read.
        let filler = [UInt8](repeating: 0, count: 1 << 16)
        while send(near.descriptor, filler, filler.count, Int32(MSG_DONTWAIT)) > 0 {}
        async let readable: Void = waitUntil(
            .readable, descriptor: near.descriptor, timeout: .seconds(5), operation: "read")
        async let writable: Void = waitUntil(
            .writable, descriptor: near.descriptor, timeout: .seconds(5), operation: "write")
        _ = write(far.descriptor, "x", 1)
        try await readable
        var sink = [UInt8](repeating: 0, count: 1 << 20)
        while recv(far.descriptor, &sink, sink.count, Int32(MSG_DONTWAIT)) > 0 {}
        try await writable
    }
}

/// A value shared between test tasks.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

@Suite(.timeLimit(.minutes(5))) struct DeadlineHeapTests {
    @Test func deadlinesComeOutEarliestFirstAndEndedWaitsDoNotPileUp() {
        var heap = DeadlineHeap()
        let start = ContinuousClock.now
        let waits = (0..<10_000).map {
            Wait(readiness: .readable, descriptor: 0, deadline: nil, operation: "test \($0)")
        }
        var largest = 0
        for (index, wait) in waits.enumerated() {
            heap.insert(start + .seconds(60 + (index * 7_919) % 10_000), wait)
            largest = max(largest, heap.count)
            // Almost every wait ends by readiness long before its deadline.
            if index % 100 != 0 {
                wait.finish(.success(()))
                heap.noteEnded()
            }
        }
        #expect(largest < 300, "ended waits are dropped: \(largest) entries at most for 100 waits in progress")
        #expect(heap.earliest == start + .seconds(60))
        let due = heap.popDue(at: start + .seconds(60 + 10_000))
        #expect(due.count == 100)
        #expect(heap.earliest == nil)
    }

    /// A burst of waits in progress at once, all ending before their deadlines: once it is over,
    /// the heap keeps a few of them at most, not the burst's.
    @Test func aBurstThatEndedLeavesAFewWaitsAtMost() {
        var heap = DeadlineHeap()
        let start = ContinuousClock.now
        let lasting = Wait(readiness: .readable, descriptor: 0, deadline: nil, operation: "lasting")
        heap.insert(start + .seconds(30), lasting)
        let burst = (0..<4_096).map {
            Wait(readiness: .readable, descriptor: 0, deadline: nil, operation: "burst \($0)")
        }
        for wait in burst { heap.insert(start + .seconds(600), wait) }
        #expect(heap.count == 4_097)
        for wait in burst {
            wait.finish(.failure(CancellationError()))
            heap.noteEnded()
        }
        #expect(heap.count <= DeadlineHeap.endedBeforeCompaction + 1, "\(heap.count) entries left")
        #expect(heap.popDue(at: start + .seconds(600)).map { $0 === lasting } == [true])
    }
}
