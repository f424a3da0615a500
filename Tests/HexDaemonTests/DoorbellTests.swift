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

    /// A loop waiting for its machine's deadline wakes at it, or at a ring before it; a ring kept
    /// from before the wait ends it at once.
    @Test func aWaitUntilADeadlineEndsAtItOrAtARingBefore() async {
        let doorbell = Doorbell()
        let start = ContinuousClock.now
        await doorbell.wait(until: start + .milliseconds(50))
        #expect(ContinuousClock.now >= start + .milliseconds(50), "not before its deadline")
        let far = ContinuousClock.now + .seconds(600)
        let woken = Task { () -> ContinuousClock.Instant in
            await doorbell.wait(until: far)
            return .now
        }
        try? await Task.sleep(for: .milliseconds(50))
        let rung = ContinuousClock.now
        doorbell.ring()
        let wokenAt = await woken.value
        #expect(wokenAt >= rung && wokenAt < far, "a ring ends the wait long before its deadline")
        doorbell.ring()
        await doorbell.wait(until: far)
        let noDeadline = Task { await doorbell.wait(until: nil) }
        try? await Task.sleep(for: .milliseconds(50))
        doorbell.ring()
        await noDeadline.value
    }
}
