import HexEngine
import Testing

/// How fast strangers may ask to pair, with the clock passed in.
@Suite(.timeLimit(.minutes(5))) struct PairingAdmissionTests {
    private let now = ContinuousClock.now

    /// Strangers are admitted at the rate, and a flood makes peers first heard during it strangers.
    @Test func strangersAreAdmittedAtTheRateAndAFloodIsRemembered() {
        var admission = PairingAdmission()
        var admitted = 0
        for millisecond in 0..<100 where admission.admitStranger(at: now + .milliseconds(millisecond)) { admitted += 1 }
        #expect(admitted == Int(PairingAdmission.burst), "\(admitted): the burst, then nothing within 100 ms")
        let heardBefore = admission.knewBefore(now - .seconds(1), at: now + .milliseconds(100))
        let heardDuring = admission.knewBefore(now + .milliseconds(50), at: now + .milliseconds(100))
        #expect(heardBefore && !heardDuring, "a peer first heard during the flood is a stranger")
        let later = now + .seconds(3)
        let refilled = admission.admitStranger(at: later)
        #expect(refilled, "the bucket refills at the rate")
        let calm =
            later + .seconds(Int(PairingAdmission.burst / PairingAdmission.rate)) + PairingAdmission.calm
            + .seconds(1)
        let afterCalm = admission.knewBefore(now + .milliseconds(50), at: calm)
        #expect(afterCalm, "a calm ends the flood")
    }
}
