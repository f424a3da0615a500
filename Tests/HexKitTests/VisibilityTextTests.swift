import Testing

@testable import HexKit

/// How a visibility reads for people, and the time it has left, whatever a report says.
@Suite(.timeLimit(.minutes(5))) struct VisibilityTextTests {
    @Test func timeLeftIsRoundedUpInTheLargestUsefulUnit() {
        #expect(Visibility.timeLeft(4.2) == "5 s")
        #expect(Visibility.timeLeft(119) == "119 s")
        #expect(Visibility.timeLeft(600) == "10 min")
        #expect(Visibility.timeLeft(601) == "11 min")
        #expect(Visibility.timeLeft(86_400) == "24 h 0 min")
    }

    @Test func aTimeLeftFromAHostileReportCannotTrap() {
        #expect(Visibility.timeLeft(-5) == "0 s")
        #expect(Visibility.timeLeft(.nan) == "0 s")
        #expect(Visibility.timeLeft(.infinity) == "277777 h 47 min")
        #expect(Visibility.timeLeft(-.infinity) == "0 s")
    }

    @Test func aVisibilityReadsAsWhatItIsAtThatTime() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let end = now.addingTimeInterval(240)
        #expect(Visibility.visible.text(at: now) == "visible")
        #expect(Visibility.hidden.text(at: now) == "hidden")
        #expect(
            Visibility.visibleUntil(end).text(at: now)
                == "visible until \(end.formatted(.iso8601)) (4 min left), then hidden")
        #expect(Visibility.visibleUntil(end).text(at: end) == "hidden", "over at its end")
    }
}
