import HexEngine
import Testing

/// The outbox's backoff: doubling from a second, at most five minutes, jittered down to half.
@Suite(.timeLimit(.minutes(5))) struct RetryScheduleTests {
    @Test func theWaitDoublesUpToTheLongestAndJitterOnlyShortensIt() {
        let schedule = RetrySchedule()
        #expect(schedule.delay(afterAttempts: 1, jitter: 1) == .seconds(1))
        #expect(schedule.delay(afterAttempts: 2, jitter: 1) == .seconds(2))
        #expect(schedule.delay(afterAttempts: 4, jitter: 0.5) == .seconds(4))
        #expect(schedule.delay(afterAttempts: 20, jitter: 1) == .seconds(300))
        #expect(schedule.delay(afterAttempts: .max, jitter: 1) == .seconds(300), "no overflow")
        #expect(schedule.delay(afterAttempts: 0, jitter: 7) == .seconds(1), "jitter is clamped to 0.5...1")
        for attempts in 1...12 {
            let full = schedule.delay(afterAttempts: attempts, jitter: 1)
            #expect(schedule.delay(afterAttempts: attempts, jitter: 0.75) == full * 0.75)
            #expect(schedule.delay(afterAttempts: attempts, jitter: 0.1) == full / 2, "never below half")
        }
    }
}
