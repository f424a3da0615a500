import HexEngine
import Testing

/// Offers waiting for the person's yes, on a fake clock.
@Suite(.timeLimit(.minutes(1))) struct OfferConsentTests {
    typealias Consent = OfferConsent<String>
    private let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// Why `open` was refused; nil when it was not.
    private func refusal(_ consent: inout Consent, _ key: String, at now: ContinuousClock.Instant) -> Consent.Refusal? {
        do {
            _ = try consent.open(key, named: key, offering: "a note", at: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func oneOfferPerDeviceWaitsUntilAnsweredOrItsTimeIsOver() throws {
        var consent = Consent(wait: .seconds(60), capacity: 4)
        let first = try consent.open("localsend:AB", named: "Pixel", offering: "3 files, 1 MiB", at: at(0))
        #expect(first.until == at(60) && consent.waiting.first?.what == "3 files, 1 MiB")
        #expect(refusal(&consent, "localsend:AB", at: at(1)) == .waitingAlready, "one offer per device")
        let second = try consent.open("localsend:CD", named: "Mac", offering: "a message", at: at(2))
        #expect(second.number != first.number)
        #expect(consent.answer("localsend:AB") == first && consent.answer("localsend:AB") == nil, "answered once")
        #expect(consent.expire(at: at(61)).isEmpty, "the second has a minute of its own")
        #expect(consent.expire(at: at(62)) == [second] && consent.waiting.isEmpty)
        #expect(consent.answer("localsend:CD") == nil, "too late to answer")
    }

    /// A sender that gives up withdraws its offer by number: it ends at once, and only once.
    @Test func aWithdrawnOfferWaitsNoMore() throws {
        var consent = Consent(wait: .seconds(60), capacity: 4)
        let first = try consent.open("localsend:AB", named: "Pixel", offering: "a file", at: at(0))
        let second = try consent.open("localsend:CD", named: "Mac", offering: "a file", at: at(0))
        #expect(consent.withdraw(first.number) == first && consent.withdraw(first.number) == nil)
        #expect(consent.waiting == [second] && consent.answer("localsend:AB") == nil)
        #expect(consent.expire(at: at(61)) == [second], "the withdrawn offer is not refused twice")
    }

    @Test func atMostCapacityOffersWait() throws {
        var consent = Consent(wait: .seconds(60), capacity: 2)
        _ = try consent.open("a", named: "a", offering: "x", at: at(0))
        _ = try consent.open("b", named: "b", offering: "x", at: at(0))
        #expect(refusal(&consent, "c", at: at(1)) == .full)
        #expect(refusal(&consent, "c", at: at(60)) == .full, "over, but not yet handed to the driver")
        #expect(consent.expire(at: at(60)).count == 2)
        #expect(refusal(&consent, "c", at: at(60)) == nil, "handed over and refused: room again")
    }
}
