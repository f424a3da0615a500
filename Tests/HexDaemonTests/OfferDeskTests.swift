import HexCarrier
import HexEngine
import Testing

/// Offers that wait for the person (LocalSend's and Quick Share's, through one `OfferDesk`): the
/// sender is held until the person answers, the offer expires or the sender gives up.
@Suite(.timeLimit(.minutes(1))) struct OfferDeskTests {
    /// Asks on a task of its own, and returns once the offer waits (its `opened` told).
    private func asking(
        _ desk: OfferDesk<String>, _ key: String, keeping extra: String = "kept"
    ) async -> Task<OfferDesk<String>.Outcome?, Never> {
        let (opened, told) = AsyncStream.makeStream(of: Void.self)
        let task = Task { () -> OfferDesk<String>.Outcome? in
            try? await desk.ask(key, named: "Pixel", offering: "2 files", keeping: extra) { _ in told.yield() }
        }
        for await _ in opened { break }
        return task
    }

    @Test func theSenderIsHeldUntilThePersonAnswersAndHearsTheAnswer() async throws {
        let desk = OfferDesk<String>()
        let yes = await asking(desk, "quickshare-offer:1", keeping: "certificate")
        let no = await asking(desk, "quickshare-offer:2")
        #expect(desk.waiting.map(\.key) == ["quickshare-offer:1", "quickshare-offer:2"])
        let answer = try #require(desk.answer("quickshare-offer:1"))
        #expect(answer.extra == "certificate" && answer.request.what == "2 files")
        #expect(desk.waiting.map(\.key) == ["quickshare-offer:2"], "answered, it waits no more")
        answer.reply(true)
        #expect(await yes.value == .accepted)
        try #require(desk.answer("quickshare-offer:2")).reply(false)
        #expect(await no.value == .declined)
        #expect(desk.answer("quickshare-offer:2") == nil, "nothing waits to be answered twice")
    }

    /// An answer dropped without a reply lets its sender go, declined: none is held for ever.
    @Test func anAnswerNeverRepliedToDeclinesItsSender() async throws {
        let desk = OfferDesk<String>()
        let asked = await asking(desk, "quickshare-offer:3")
        do {
            let answer = try #require(desk.answer("quickshare-offer:3"))
            #expect(answer.request.key == "quickshare-offer:3")
        }
        #expect(await asked.value == .declined)
    }

    /// A task cancelled before it asks is told its offer was withdrawn; nothing waits.
    @Test func aSenderGoneBeforeItAsksLeavesNothingWaiting() async {
        let desk = OfferDesk<String>()
        let asked = Task { () -> OfferDesk<String>.Outcome? in
            withUnsafeCurrentTask { $0?.cancel() }
            return try? await desk.ask("localsend:D4", named: "gone", offering: "a file", keeping: "") { _ in }
        }
        #expect(await asked.value == .withdrawn)
        #expect(desk.waiting.isEmpty && desk.extras.isEmpty)
    }

    @Test func aSenderThatGivesUpWithdrawsItsOfferAtOnce() async {
        let desk = OfferDesk<String>()
        let asked = await asking(desk, "localsend:A1")
        asked.cancel()
        #expect(await asked.value == .withdrawn)
        #expect(desk.waiting.isEmpty && desk.extras.isEmpty, "no question is left for the person")
        #expect(desk.answer("localsend:A1") == nil)
    }

    @Test func anOfferWithdrawnByItsNumberIsRefused() async throws {
        // The person's wait as hexd gives it: the offer must still be waiting when it is withdrawn,
        // however late a loaded machine runs this test's steps.
        let desk = OfferDesk<String>(OfferConsent(capacity: 2))
        let cancelled = await asking(desk, "localsend:A1", keeping: "10.0.0.5")
        let number = try #require(desk.extras.first { $0.value == "10.0.0.5" }?.key)
        #expect(desk.withdraw(number)?.key == "localsend:A1")
        #expect(await cancelled.value == .withdrawn)
        #expect(desk.waiting.isEmpty)
    }

    @Test func anOfferOverItsWaitIsRefused() async {
        let desk = OfferDesk<String>(OfferConsent(wait: .milliseconds(200), capacity: 2))
        let expiring = await asking(desk, "localsend:B2")
        #expect(await expiring.value == .expired, "refused once its wait is over")
        #expect(desk.waiting.isEmpty)
    }

    @Test func aSecondOfferOfOneDeviceAndOneTooManyAreRefusedAtOnce() async throws {
        let desk = OfferDesk<String>(OfferConsent(capacity: 2))
        let first = await asking(desk, "localsend:A1")
        let second = await asking(desk, "localsend:B2")
        await #expect(throws: OfferConsent<String>.Refusal.waitingAlready) {
            try await desk.ask("localsend:A1", named: "again", offering: "a file", keeping: "") { _ in }
        }
        await #expect(throws: OfferConsent<String>.Refusal.full) {
            try await desk.ask("localsend:C3", named: "third", offering: "a file", keeping: "") { _ in }
        }
        for task in [first, second] {
            task.cancel()
            #expect(await task.value == .withdrawn)
        }
    }
}
