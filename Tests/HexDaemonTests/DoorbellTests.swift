import Testing

@testable import HexCarrier
@testable import HexDaemon

/// The doorbell a restartable loop waits on: rings are kept for the next waiter, and a cancelled
/// waiter ends nothing (an AsyncStream would end, and the loop would spin).
@Suite(.timeLimit(.minutes(5))) struct DoorbellTests {
    @Test func aRingWithNoOneWaitingIsKeptForTheNextWaiter() async {
        let doorbell = Doorbell()
        doorbell.ring()
        doorbell.ring()
        await doorbell.wait()
        let waiter = Task { await doorbell.wait() }
        try? await Task.sleep(for: .milliseconds(50))
        doorbell.ring()
        await waiter.value
    }

    @Test func cancelledWaitersLeaveItWorking() async {
        let doorbell = Doorbell()
        for _ in 0..<3 {
            let waiter = Task { await doorbell.wait() }
            try? await Task.sleep(for: .milliseconds(20))
            waiter.cancel()
            await waiter.value
        }
        // A waiter after those is woken by a ring, not at once by a doorbell that has ended.
        let woken = Task { () -> ContinuousClock.Instant in
            await doorbell.wait()
            return .now
        }
        try? await Task.sleep(for: .milliseconds(100))
        let rung = ContinuousClock.now
        doorbell.ring()
        #expect(await woken.value >= rung)
    }
}
