import HexEngine
import LocalSendCore
import Testing

/// The PIN LocalSend senders give, try by try on a fake clock.
@Suite(.timeLimit(.minutes(1))) struct LocalSendPinGateTests {
    typealias Gate = LocalSendPinGate<String>
    private let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    @Test func noPinPassesEveryone() {
        var gate = Gate(pin: nil)
        #expect(gate.check(nil, from: "a", at: start) == .pass)
        var empty = Gate(pin: "")
        #expect(empty.check("x", from: "a", at: start) == .pass, "an empty PIN asks none")
    }

    @Test func threeWrongTriesLockAnAddressOutForAWhileAndNoOtherAddress() {
        var gate = Gate(pin: "4711", lockout: .seconds(600))
        #expect(gate.check(nil, from: "a", at: at(0)) == .required && Gate.Verdict.required.status == 401)
        #expect(gate.check("4711", from: "a", at: at(1)) == .pass)
        let tries = (2...4).map { gate.check("0000", from: "a", at: at($0)) }
        #expect(tries == [.wrong, .wrong, .wrong])
        #expect(gate.check("4711", from: "a", at: at(5)) == .locked, "locked, the right PIN too")
        #expect(Gate.Verdict.locked.status == 429)
        #expect(gate.check("4711", from: "b", at: at(5)) == .pass, "another address is not locked")
        #expect(gate.check("4711", from: "a", at: at(603)) == .locked, "ten minutes from the third wrong try")
        #expect(gate.check("4711", from: "a", at: at(604)) == .pass, "a lockout ends")
        let short = gate.check("471", from: "a", at: at(605))
        let long = gate.check("47111", from: "a", at: at(605))
        #expect(short == .wrong && long == .wrong)
    }

    @Test func wrongTriesFarApartAgeOutBeforeTheyLock() {
        var gate = Gate(pin: "4711", lockout: .seconds(600))
        _ = gate.check("1", from: "a", at: at(0))
        _ = gate.check("2", from: "a", at: at(300))
        #expect(gate.check("3", from: "a", at: at(600)) == .wrong)
        #expect(gate.check("4711", from: "a", at: at(601)) == .pass, "the first try aged out: two within ten minutes")
    }

    @Test func theRightPinClearsAnAddresssWrongTries() {
        var gate = Gate(pin: "4711")
        _ = gate.check("1", from: "a", at: at(0))
        _ = gate.check("2", from: "a", at: at(1))
        #expect(gate.check("4711", from: "a", at: at(2)) == .pass)
        _ = gate.check("3", from: "a", at: at(3))
        _ = gate.check("4", from: "a", at: at(4))
        #expect(gate.check("4711", from: "a", at: at(5)) == .pass, "two wrong since the right one: not locked")
    }

    @Test func wrongTriesSpreadOverManyAddressesLockEveryoneOut() {
        var gate = Gate(pin: "4711", triesInAll: 30, lockout: .seconds(600), capacity: 8)
        for index in 0..<30 { _ = gate.check("0000", from: "host\(index)", at: at(index)) }
        #expect(gate.check("4711", from: "fresh", at: at(31)) == .locked, "thirty wrong in all lock everyone")
        #expect(gate.check("4711", from: "fresh", at: at(631)) == .pass, "until the tries age out")
    }
}
