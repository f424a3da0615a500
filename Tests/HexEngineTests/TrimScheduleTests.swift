import HexEngine
import Testing

/// When freed memory goes back to the system, report by report on a fake clock.
@Suite(.timeLimit(.minutes(1))) struct TrimScheduleTests {
    private let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1_000)) }

    @Test func aBurstIsTrimmedASecondAfterItEnds() {
        var schedule = TrimSchedule()
        #expect(schedule.deadline == nil, "no report, no timer")
        for tenth in 0..<30 { schedule.reported(at: at(Double(tenth) / 10)) }
        #expect(schedule.deadline == at(3.9))
        let (early, due) = (schedule.tick(at: at(3.5)), schedule.tick(at: at(3.9)))
        #expect(!early && due)
        #expect(schedule.deadline == nil)
    }

    @Test func aSteadyTrickleIsTrimmedOncePerInterval() {
        var schedule = TrimSchedule()
        var trims: [Double] = []
        // A connection ends every 1.5 s for a minute: each is quiet for a second after it.
        for step in 0..<40 {
            let now = Double(step) * 1.5
            schedule.reported(at: at(now))
            while let deadline = schedule.deadline, deadline <= at(now + 1.5) {
                if schedule.tick(at: deadline) { trims.append((deadline - start).inSeconds) }
            }
        }
        let gaps = zip(trims.dropFirst(), trims).map { $0 - $1 }
        #expect(trims.first == 1 && trims.count >= 5 && trims.count <= 6, "\(trims)")
        #expect(gaps.allSatisfy { $0 >= 10 && $0 < 12 }, "one trim per interval: \(trims)")
    }

    @Test func reportsThatGoOnAreTrimmedEveryInterval() {
        var schedule = TrimSchedule()
        for tenth in 0..<250 {
            schedule.reported(at: at(Double(tenth) / 10))
            if let deadline = schedule.deadline, deadline <= at(Double(tenth) / 10) {
                let trimmed = schedule.tick(at: deadline)
                #expect(trimmed)
                #expect([10.0, 20.0].contains((deadline - start).inSeconds.rounded()))
            }
        }
    }
}
