import QuickShareCore
import Testing

@Suite(.timeLimit(.minutes(1)))
struct NudgeMachineTests {
    let start = ContinuousClock.now

    @Test func aWaitingSendWakesPhonesUntilItGoes() {
        var machine = NudgeMachine()
        #expect(machine.next(at: start) == .wait(until: nil))
        machine.sendWaits(for: "quickshare:RCV1", at: start)
        #expect(machine.next(at: start) == .register)
        #expect(machine.next(at: start + .seconds(1)) == .wait(until: nil), "one registration at a time")
        machine.registered()
        #expect(machine.phase == .advertising)
        #expect(machine.next(at: start + .seconds(2)) == .wait(until: start + .seconds(330)))
        machine.sendWent(to: "quickshare:RCV1")
        #expect(machine.next(at: start + .seconds(3)) == .unregister)
        #expect(machine.next(at: start + .seconds(3)) == .wait(until: nil), "one withdrawal at a time")
        machine.unregistered()
        #expect(machine.phase == .idle)
        #expect(machine.next(at: start + .seconds(4)) == .wait(until: nil))
    }

    @Test func aSendNoLongerTriedStopsTheAdvertisementOnceItsMarkLapses() {
        var machine = NudgeMachine()
        machine.sendWaits(for: "quickshare:RCV1", at: start)
        _ = machine.next(at: start)
        machine.registered()
        // Tried again (the outbox waits at most 300 s between attempts): the mark is fresh again.
        machine.sendWaits(for: "quickshare:RCV1", at: start + .seconds(200))
        #expect(machine.next(at: start + .seconds(329)) == .wait(until: start + .seconds(530)))
        #expect(machine.wanted(at: start + .seconds(529)))
        // Cancelled meanwhile: no attempt comes, and the mark lapses.
        #expect(machine.next(at: start + .seconds(530)) == .unregister)
    }

    @Test func aDevicesAttemptsWakePhonesForTenMinutesAtMostUntilItsSendStopsBeingTried() {
        var machine = NudgeMachine()
        for seconds in [0, 300, 600] { machine.sendWaits(for: "quickshare:RCV1", at: start + .seconds(seconds)) }
        #expect(machine.wanted(at: start + .seconds(599)))
        #expect(!machine.wanted(at: start + .seconds(600)), "ten minutes in a row, and no more")
        machine.sendWaits(for: "quickshare:RCV1", at: start + .seconds(900))
        #expect(!machine.wanted(at: start + .seconds(901)), "the same run of attempts")
        // Not tried for longer than a mark lasts: that send is gone, and a new one wakes phones again.
        machine.sendWaits(for: "quickshare:RCV1", at: start + .seconds(1_300))
        #expect(machine.wanted(at: start + .seconds(1_301)))
    }

    @Test func anotherDevicesWaitingSendKeepsPhonesWoken() {
        var machine = NudgeMachine()
        machine.sendWaits(for: "quickshare:RCV1", at: start)
        machine.sendWaits(for: "quickshare:RCV2", at: start + .seconds(10))
        _ = machine.next(at: start + .seconds(10))
        machine.registered()
        machine.sendWent(to: "quickshare:RCV1")
        #expect(machine.next(at: start + .seconds(11)) == .wait(until: start + .seconds(340)))
    }

    @Test func aRefreshWakesPhonesForAMinuteAndAnotherMakesItLonger() {
        var machine = NudgeMachine()
        machine.refreshed(at: start)
        #expect(machine.next(at: start) == .register)
        machine.registered()
        machine.refreshed(at: start + .seconds(30))
        #expect(machine.next(at: start + .seconds(31)) == .wait(until: start + .seconds(90)))
        #expect(machine.next(at: start + .seconds(90)) == .unregister)
    }

    @Test func aSystemThatCannotAdvertiseIsAskedAgainOnlyWhileWanted() {
        var machine = NudgeMachine()
        machine.sendWaits(for: "quickshare:RCV1", at: start)
        #expect(machine.next(at: start) == .register)
        machine.failed("BlueZ (org.bluez) is not on the system bus", at: start)
        #expect(
            machine.phase
                == .unavailable(reason: "BlueZ (org.bluez) is not on the system bus", retryAt: start + .seconds(60)))
        #expect(machine.next(at: start + .seconds(1)) == .wait(until: start + .seconds(60)))
        #expect(machine.next(at: start + .seconds(60)) == .register)
        machine.failed("the Bluetooth adapter /org/bluez/hci0 is off", at: start + .seconds(60))
        machine.sendWent(to: "quickshare:RCV1")
        #expect(machine.next(at: start + .seconds(200)) == .wait(until: nil), "nothing waits: nothing is asked")
        #expect(machine.phase == .idle)
        #expect(machine.lastFailure == "the Bluetooth adapter /org/bluez/hci0 is off", "still said")
    }

    @Test func theSystemEndingTheAdvertisementIsAFailureOnlyWhileAdvertising() {
        var machine = NudgeMachine()
        machine.refreshed(at: start)
        _ = machine.next(at: start)
        machine.released(at: start)
        #expect(machine.phase == .registering, "a release before the registration is answered is not one")
        machine.registered()
        machine.released(at: start + .seconds(5))
        #expect(
            machine.phase
                == .unavailable(reason: "the Bluetooth service ended the advertisement", retryAt: start + .seconds(65)))
        #expect(machine.next(at: start + .seconds(6)) == .wait(until: start + .seconds(65)))
        #expect(machine.next(at: start + .seconds(65)) == .wait(until: nil), "the minute is over: not asked again")
    }

    @Test func marksAreBoundedAndTheOneLapsingFirstMakesRoom() {
        var machine = NudgeMachine()
        machine.sendWaits(for: "first", at: start)
        let devices = (1...NudgeMachine.maximumMarks).map { "quickshare:\($0)" }
        for device in devices { machine.sendWaits(for: device, at: start + .seconds(1)) }
        for device in devices { machine.sendWent(to: device) }
        #expect(!machine.wanted(at: start + .seconds(2)), "the first mark made room for the last device's")
    }

    @Test func theAdvertisementCarriesQuickSharesServiceDataWithItsRandomTail() {
        let random: [UInt8] = Array(1...10)
        let advertisement = NudgeAdvertisement(random: random + [99])
        #expect(advertisement.serviceData.count == 24)
        #expect(advertisement.serviceData.prefix(5) == [0xFC, 0x12, 0x8E, 0x01, 0x42])
        #expect(advertisement.serviceData[5..<14].allSatisfy { $0 == 0 })
        #expect(Array(advertisement.serviceData.suffix(10)) == random)
        #expect(NudgeAdvertisement(random: [7]).serviceData.suffix(10) == [7] + Array(repeating: 0, count: 9))
    }
}
