import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ConnectionTimersTests {
    let start = ContinuousClock.now

    @Test func keepAlivesGoEveryIntervalOnceSecure() {
        var timers = ConnectionTimers(opened: start)
        #expect(timers.due(at: start + .seconds(5)) == .nothing(until: start + .seconds(30)))
        timers.keptAlive(at: start + .seconds(1))
        timers.heard(at: start + .seconds(9))
        #expect(timers.due(at: start + .seconds(9)) == .nothing(until: start + .seconds(11)))
        #expect(timers.due(at: start + .seconds(11)) == .keepAlive)
    }

    @Test func aSilentSenderAndASlowOneAreGivenUpOn() {
        var timers = ConnectionTimers(opened: start)
        timers.heard(at: start + .seconds(20))
        #expect(timers.due(at: start + .seconds(31)) == .giveUp("no offer came within 30.0 seconds"))
        timers.asked(at: start + .seconds(25))
        #expect(timers.due(at: start + .seconds(31)) == .nothing(until: start + .seconds(50)))
        #expect(timers.due(at: start + .seconds(50)) == .giveUp("nothing came for 30.0 seconds"))
        timers.heard(at: start + .seconds(80))
        #expect(timers.due(at: start + .seconds(85)) == .giveUp("the offer went unanswered for 60.0 seconds"))
        timers.answeredOffer(at: start + .seconds(85), transferring: 64 << 10)
        #expect(timers.due(at: start + .seconds(85)) == .nothing(until: start + .seconds(110)))
        timers.heard(at: start + .seconds(110))
        #expect(timers.due(at: start + .seconds(115)) == .nothing(until: start + .seconds(116)))
        #expect(timers.due(at: start + .seconds(116)) == .giveUp("the payloads came too slowly"))
    }
}
