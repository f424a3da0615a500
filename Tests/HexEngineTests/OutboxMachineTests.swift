import Foundation
import HexEngine
import Testing

/// The outbox's decisions, event in and action out, with the clock passed in.
@Suite(.timeLimit(.minutes(5))) struct OutboxMachineTests {
    struct Send: OutboxItem, Equatable {
        let messageID: String
        let destination: String
    }

    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aSendIsAttemptedByOneCallerAtATimeAndTheOthersWaitForItsOutcome() {
        var machine = OutboxMachine()
        let firstCaller = machine.request("a")
        #expect(firstCaller == .attempt)
        guard case .wait(let first) = machine.request("a"), case .wait(let second) = machine.request("a") else {
            Issue.record("a second and third caller wait")
            return
        }
        #expect(first != second)
        let loopReserved = machine.reserve("a")
        #expect(!loopReserved, "the delivery loop passes over a send under way")
        let waitersResumed = machine.finished("a")
        #expect(waitersResumed == [first, second])
        let noMoreWaiters = machine.finished("a").isEmpty
        #expect(noMoreWaiters, "each waiter is resumed once")
        let nextCaller = machine.request("a")
        #expect(nextCaller == .attempt, "once settled, it may be attempted again")
    }

    /// The old outbox's double send: the user's attempt found the entry not under way, suspended
    /// to read it, and the loop sent it meanwhile. Here the first to ask holds it.
    @Test func theLoopCannotTakeASendTheUsersAttemptIsReading() {
        var machine = OutboxMachine()
        machine.roundStarts()
        let due = [Send(messageID: "a", destination: "grace")]
        var lanes = machine.lanes(of: due)
        #expect(machine.request("a") == .attempt)  // the user's attempt, before the lane reaches it
        let loopsTurn = lanes[0].next(reservingIn: &machine)
        #expect(loopsTurn == nil)
        _ = machine.finished("a")
        machine.roundEnds()
        #expect(machine.attemptsUnderWay == 0)
    }

    /// The other double send: the round read the entry, the user's attempt delivered it, and the
    /// lane came to it afterwards with what it had read.
    @Test func aSendSettledSinceTheRoundReadItIsNotAttemptedAgainThatRound() {
        var machine = OutboxMachine()
        machine.roundStarts()
        let due = [Send(messageID: "a", destination: "grace"), Send(messageID: "b", destination: "grace")]
        var lane = machine.lanes(of: due)[0]
        let usersAttempt = machine.request("b")
        #expect(usersAttempt == .attempt)
        let nobodyWaited = machine.finished("b").isEmpty
        #expect(nobodyWaited)
        let laneFirst = lane.next(reservingIn: &machine)
        #expect(laneFirst == due[0])
        _ = machine.finished("a")
        let laneSecond = lane.next(reservingIn: &machine)
        #expect(laneSecond == nil, "b was settled after the round read it")
        #expect(machine.lanes(of: due).isEmpty, "nor does a later look at the same read bring them back")
        machine.roundEnds()
        machine.roundStarts()
        #expect(machine.lanes(of: due).count == 1, "a new round's read is believed again")
    }

    /// The cancelled send that went out anyway: the round read a and b for Grace, the user
    /// cancelled b while a was on the wire, and the lane came to b with what it had read.
    @Test func aSendCancelledWhileItsLaneIsBusyIsNeverAttempted() {
        var machine = OutboxMachine()
        machine.roundStarts()
        let due = [Send(messageID: "a", destination: "grace"), Send(messageID: "b", destination: "grace")]
        var lane = machine.lanes(of: due)[0]
        let laneFirst = lane.next(reservingIn: &machine)
        #expect(laneFirst == due[0])
        let bWasUnderWay = machine.cancelStarts("b")
        #expect(!bWasUnderWay)
        let anotherCaller = machine.request("a")
        #expect(anotherCaller != .attempt, "a is still under way")
        _ = machine.finished("a")
        let laneSecond = lane.next(reservingIn: &machine)
        #expect(laneSecond == nil, "b is being removed: the lane passes it over")
        machine.cancelEnds("b")
        #expect(machine.lanes(of: due).isEmpty, "nor does the same read bring it back once removed")
        machine.roundEnds()
        machine.roundStarts()
        let cancelledDuringTheRead = machine.cancelStarts("a")
        #expect(!cancelledDuringTheRead)
        #expect(
            machine.lanes(of: due).map(\.remaining) == [[due[1]]],
            "a new round's read leaves out a send being cancelled")
        let reserved = machine.reserve("a")
        #expect(!reserved)
        let usersRetry = machine.request("a")
        #expect(usersRetry == .withdrawn, "a user's retry of it finds nothing to attempt")
        #expect(machine.cancelStarts("a") == false && machine.isWithdrawing("a"), "a second cancel of it")
        machine.cancelEnds("a")
        #expect(machine.isWithdrawing("a"), "the second cancel is still in progress")
        machine.cancelEnds("a")
        #expect(!machine.isWithdrawing("a"))
        machine.roundEnds()
    }

    @Test func cancellingASendUnderWaySaysItMayStillGo() {
        var machine = OutboxMachine()
        let first = machine.request("a")
        #expect(first == .attempt)
        let underWay = machine.cancelStarts("a")
        #expect(underWay, "its bytes may be on the wire")
        _ = machine.finished("a")
        machine.cancelEnds("a")
        let again = machine.request("a")
        #expect(again == .attempt, "outside a round, what the table holds decides")
    }

    @Test func lanesKeepEachDestinationsOrderAndTheOrderDestinationsCameIn() {
        let machine = OutboxMachine()
        let due = [
            Send(messageID: "1", destination: "grace"), Send(messageID: "2", destination: "10.0.0.2:18521"),
            Send(messageID: "3", destination: "grace"), Send(messageID: "4", destination: "10.0.0.2:18521"),
        ]
        let lanes = machine.lanes(of: due)
        #expect(lanes.map(\.destination) == ["grace", "10.0.0.2:18521"])
        var copy = machine
        var grace = lanes[0]
        let first = grace.next(reservingIn: &copy)?.messageID
        #expect(first == "1")
        let second = grace.next(reservingIn: &copy)?.messageID
        #expect(second == "3")
        let third = grace.next(reservingIn: &copy)
        #expect(third == nil)
    }

    @Test func aLaneThatOutlivesItsRoundIsLeftOutOfLaterRoundsUntilItEnds() {
        var machine = OutboxMachine()
        let due = [
            Send(messageID: "1", destination: "localsend:AB"), Send(messageID: "2", destination: "grace"),
            Send(messageID: "3", destination: "localsend:AB"),
        ]
        machine.roundStarts()
        var phone = machine.lanes(of: due)[0]
        machine.laneOutlivesRound("localsend:AB")
        _ = phone.next(reservingIn: &machine)
        machine.roundEnds()
        machine.roundStarts()
        #expect(
            machine.lanes(of: due).map(\.destination) == ["grace"],
            "the phone's later send waits for its lane: it neither overtakes nor goes twice")
        machine.roundEnds()
        _ = machine.finished("1")
        machine.outlivingLaneEnded("localsend:AB")
        #expect(machine.lanes(of: due).map(\.destination) == ["localsend:AB", "grace"])
    }

    @Test func onceASendMustWaitTheRestOfItsLaneWaitsAsLong() {
        var machine = OutboxMachine()
        let due = (1...3).map { Send(messageID: "\($0)", destination: "grace") }
        var lane = machine.lanes(of: due)[0]
        let attempted = lane.next(reservingIn: &machine)?.messageID
        #expect(attempted == "1")
        let postponed = lane.postpone().map(\.messageID)
        #expect(postponed == ["2", "3"])
        let afterPostponing = lane.next(reservingIn: &machine)
        #expect(afterPostponing == nil)
        let nothingLeft = lane.postpone().isEmpty
        #expect(nothingLeft)
    }

    @Test func aSendUnderWayIsLeftOutOfTheRound() {
        var machine = OutboxMachine()
        let usersAttempt = machine.request("a")
        #expect(usersAttempt == .attempt)
        let lanes = machine.lanes(of: [Send(messageID: "a", destination: "grace")])
        #expect(lanes.isEmpty)
    }

    @Test func anExpiredSendIsGivenUpNamingItsAttemptsAndLastError() {
        let machine = OutboxMachine()
        let expires = start + 60
        #expect(machine.decide(expiresAt: expires, attempts: 0, lastError: nil, now: start) == .send)
        #expect(machine.decide(expiresAt: expires, attempts: 0, lastError: nil, now: expires - 0.001) == .send)
        let atExpiry = machine.decide(expiresAt: expires, attempts: 3, lastError: "away", now: expires)
        guard case .giveUp(let reason) = atExpiry else {
            Issue.record("a send is given up at its expiry")
            return
        }
        #expect(reason.hasPrefix("expired: not delivered by ") && reason.hasSuffix("after 3 attempts (last: away)"))
    }

    @Test func aFailedSendIsTriedAgainAfterTheBackoffButNeverPastItsExpiry() {
        let machine = OutboxMachine(schedule: RetrySchedule(first: .seconds(1), longest: .seconds(300)))
        let far = start + 3_600
        #expect(machine.nextAttempt(afterAttempts: 1, jitter: 1, expiresAt: far, now: start) == start + 1)
        #expect(machine.nextAttempt(afterAttempts: 3, jitter: 0.5, expiresAt: far, now: start) == start + 2)
        #expect(machine.nextAttempt(afterAttempts: 30, jitter: 1, expiresAt: far, now: start) == start + 300)
        #expect(machine.nextAttempt(afterAttempts: 30, jitter: 1, expiresAt: start + 10, now: start) == start + 10)
    }

    @Test func theLoopSleepsUntilTheNextSendIsDueWithinBounds() {
        let longest = Duration.seconds(60)
        #expect(OutboxMachine.nap(until: nil, now: start, longest: longest) == nil, "nothing queued: no timer")
        #expect(OutboxMachine.nap(until: start + 2.5, now: start, longest: longest) == .milliseconds(2_500))
        #expect(
            OutboxMachine.nap(until: start - 5, now: start, longest: longest) == .milliseconds(1),
            "overdue: at once")
        #expect(OutboxMachine.nap(until: start + 86_400, now: start, longest: longest) == longest)
        #expect(OutboxMachine.nap(until: .distantFuture, now: start, longest: longest) == longest)
    }
}
