import Testing

@testable import HexControl

/// How the time a visibility has left reads, whatever a report says.
@Suite(.timeLimit(.minutes(5))) struct VisibilityReportTests {
    @Test func timeLeftIsRoundedUpInTheLargestUsefulUnit() {
        #expect(VisibilityReport.timeLeft(4.2) == "5 s")
        #expect(VisibilityReport.timeLeft(119) == "119 s")
        #expect(VisibilityReport.timeLeft(600) == "10 min")
        #expect(VisibilityReport.timeLeft(601) == "11 min")
        #expect(VisibilityReport.timeLeft(86_400) == "24 h 0 min")
    }

    @Test func aTimeLeftFromAHostileReportCannotTrap() {
        #expect(VisibilityReport.timeLeft(-5) == "0 s")
        #expect(VisibilityReport.timeLeft(.nan) == "0 s")
        #expect(VisibilityReport.timeLeft(.infinity) == "277777 h 47 min")
        #expect(VisibilityReport.timeLeft(-.infinity) == "0 s")
    }
}
