import HexEngine
import HexKit
import Testing

/// When beacons go out, with the clock passed in.
@Suite(.timeLimit(.minutes(5))) struct AnnounceScheduleTests {
    private let start = ContinuousClock.now
    private let interval: Duration = .seconds(30)

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// Fires at each deadline until `end` and returns what went out when.
    private func run(_ schedule: inout AnnounceSchedule, until end: ContinuousClock.Instant, peers: Int = 0)
        -> [(ContinuousClock.Instant, AnnounceSchedule.Action)]
    {
        var done: [(ContinuousClock.Instant, AnnounceSchedule.Action)] = []
        while let deadline = schedule.deadline, deadline <= end {
            done += schedule.fire(at: deadline, peers: peers).map { (deadline, $0) }
        }
        return done
    }

    @Test func aStartIsAQueryThenTwoAnnouncementsThenOneEveryInterval() {
        var schedule = AnnounceSchedule(interval: interval)
        #expect(schedule.deadline == nil, "hidden until shown")
        let woken = schedule.show(at: start)
        #expect(woken)
        let sent = run(&schedule, until: start + .seconds(61))
        #expect(sent.map(\.1) == [.broadcast(.query)] + Array(repeating: .broadcast(.announce), count: 4))
        #expect(sent.map(\.0) == [at(0), at(150), at(300), at(30_300), at(60_300)])
    }

    @Test func nothingIsDueBeforeItsTimeNorWhileHidden() {
        var schedule = AnnounceSchedule(interval: interval)
        schedule.show(at: start)
        _ = schedule.fire(at: start, peers: 0)
        let early = schedule.fire(at: at(149), peers: 0)
        #expect(early.isEmpty)
        schedule.hide()
        #expect(!schedule.isAnnouncing && schedule.deadline == nil)
        let hidden = schedule.fire(at: at(10_000), peers: 0)
        #expect(hidden.isEmpty)
    }

    /// A crowded segment: the interval grows with the peers, at most doubling each beacon.
    @Test func theSteadyIntervalGrowsOnACrowdedSegment() {
        var schedule = AnnounceSchedule(interval: interval)
        schedule.show(at: start)
        _ = run(&schedule, until: at(300), peers: 64)
        #expect(schedule.interval == interval)
        _ = schedule.fire(at: at(30_300), peers: 64)
        #expect(schedule.interval == .seconds(60))
        _ = schedule.fire(at: at(90_300), peers: 64)
        #expect(schedule.interval == .seconds(120))
        #expect(schedule.deadline == at(210_300))
    }

    @Test func answersGoAtOnceThenBringTheNextBeaconForward() {
        var schedule = AnnounceSchedule(interval: interval)
        #expect(schedule.answerWanted(at: start) == .none, "a hidden daemon answers no one")
        schedule.show(at: start)
        _ = run(&schedule, until: at(300))
        #expect(schedule.answerWanted(at: at(1_000)) == .now)
        #expect(schedule.answerWanted(at: at(1_050)) == .broughtForward)
        #expect(schedule.deadline == at(1_200), "one broadcast answers everyone who appeared meanwhile")
        #expect(schedule.answerWanted(at: at(1_100)) == .none, "already that soon")
        let sent = schedule.fire(at: at(1_200), peers: 0)
        #expect(sent == [.broadcast(.announce)])
        #expect(schedule.answerWanted(at: at(1_300)) == .broughtForward, "a steady beacon counts as an answer")
    }

    @Test func aVisibilityForAWhileEndsOnTime() {
        var schedule = AnnounceSchedule(interval: interval)
        let woken = schedule.show(at: start, until: at(45_000))
        #expect(woken)
        let sent = run(&schedule, until: at(50_000))
        #expect(sent.last.map { $0.0 == at(45_000) && $0.1 == .visibilityEnded } == true)
        #expect(sent.count == 5, "query, two burst beacons, one steady, then the end")
        #expect(!schedule.isAnnouncing && schedule.deadline == nil)
        // Shown for a while when already announcing: the new end is the deadline to wake for.
        schedule.show(at: at(60_000))
        let rewoken = schedule.show(at: at(60_000), until: at(61_000))
        #expect(rewoken)
        #expect(schedule.deadline == at(60_000))
    }

    @Test func theQuietHintComesOnceAfterThirtyUnansweredBeaconsAndGoesWhenAPeerIsHeard() {
        var schedule = AnnounceSchedule(interval: .seconds(1))
        schedule.show(at: start)
        let sent = run(&schedule, until: at(300 + 1_000 * (AnnounceSchedule.quietBeacons + 5)))
        let hints = sent.filter { $0.1 == .quietHint }
        #expect(hints.count == 1)
        #expect(hints.first?.0 == at(300 + 1_000 * AnnounceSchedule.quietBeacons), "the thirtieth steady one")
        #expect(schedule.isQuiet)
        let withdrawn = schedule.peerHeard()
        #expect(withdrawn && !schedule.isQuiet)
        let again = schedule.peerHeard()
        #expect(!again, "withdrawn once")
    }

    @Test func anInterfaceChangeStartsOverWithAQueryButAFlappingLinkCostsFewQueries() {
        var schedule = AnnounceSchedule(interval: interval)
        schedule.queryAgain(at: start)
        #expect(schedule.deadline == nil, "nothing while hidden")
        schedule.show(at: start)
        _ = run(&schedule, until: at(300))
        schedule.queryAgain(at: at(5_000))
        #expect(schedule.deadline == at(5_100), "the link, then its addresses: one burst")
        schedule.queryAgain(at: at(5_050))
        #expect(schedule.deadline == at(5_100), "a query already that soon")
        let sent = schedule.fire(at: at(5_100), peers: 0)
        #expect(sent == [.broadcast(.query)])
        schedule.queryAgain(at: at(5_120))
        #expect(schedule.deadline == at(5_350), "at most four queries a second")
    }
}
