import HexEngine
import Testing

/// The mDNS responder's decisions, with the clock passed in.
@Suite(.timeLimit(.minutes(5))) struct MDNSResponderTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// Fires at each deadline until `end` and returns what was done when.
    private func run(_ responder: inout MDNSResponder, until end: ContinuousClock.Instant)
        -> [(ContinuousClock.Instant, MDNSResponder.Action)]
    {
        var done: [(ContinuousClock.Instant, MDNSResponder.Action)] = []
        while let deadline = responder.deadline, deadline <= end {
            done += responder.fire(at: deadline).map { (deadline, $0) }
        }
        return done
    }

    private func shown(queryAfter: Duration = .milliseconds(50)) -> MDNSResponder {
        var responder = MDNSResponder(name: "Ada")
        _ = responder.show(at: start, probeAfter: .milliseconds(100), queryAfter: queryAfter)
        return responder
    }

    @Test func threeProbesThenTwoAnnouncementsWhileQueriesBackOff() {
        var responder = shown()
        #expect(!responder.isPublished && responder.isProbing)
        let done = run(&responder, until: at(8_000))
        let publishing = done.filter { $0.1 != .query }
        #expect(
            publishing.map(\.1) == [
                .probe(unicastResponse: true), .probe(unicastResponse: false), .probe(unicastResponse: false),
                .announce(first: true), .announce(first: false),
            ])
        #expect(publishing.map(\.0) == [at(100), at(350), at(600), at(850), at(1_850)])
        #expect(done.filter { $0.1 == .query }.map(\.0) == [at(50), at(1_050), at(3_050), at(7_050)])
        #expect(responder.isPublished)
    }

    @Test func aConflictTakesTheNextNameAndProbesAgain() {
        var responder = shown()
        _ = run(&responder, until: at(2_000))
        let renamed = responder.conflictHeard(at: at(5_000))
        #expect(renamed == [.rename(to: "Ada (2)")])
        #expect(responder.isProbing && !responder.isPublished && responder.instanceName == "Ada (2)")
        let next = responder.fire(at: at(6_000))
        #expect(next.contains(.probe(unicastResponse: true)), "probing starts over a second later")
        let again = responder.conflictHeard(at: at(6_100))
        #expect(again == [.rename(to: "Ada (3)")])
    }

    @Test func aConflictWhileSilentIsNoneOfItsBusiness() {
        var responder = MDNSResponder(name: "Ada")
        let actions = responder.conflictHeard(at: start)
        #expect(actions.isEmpty && responder.instanceName == "Ada")
    }

    /// RFC 6762, 8.1: fifteen conflicts within ten seconds, and each further probe waits five.
    @Test func aStormOfConflictsSlowsTheProbes() {
        var responder = shown(queryAfter: .seconds(3_600))
        for index in 0..<14 { _ = responder.conflictHeard(at: at(index * 100)) }
        #expect(responder.deadline == at(13 * 100 + 1_000))
        _ = responder.conflictHeard(at: at(1_400))
        #expect(responder.deadline == at(1_400 + 5_000), "the fifteenth within ten seconds")
        _ = responder.conflictHeard(at: at(30_000))
        #expect(responder.deadline == at(31_000), "ten quiet seconds later, the pace is back")
    }

    @Test func pastTheLastNameItGivesUp() {
        var responder = shown()
        for index in 0..<MDNSResponder.maximumRenames { _ = responder.conflictHeard(at: at(index * 20_000)) }
        let last = responder.conflictHeard(at: at(10_000_000))
        #expect(last == [.giveUp])
        #expect(!responder.claimsName && !responder.isPublished)
        let after = responder.conflictHeard(at: at(10_000_001))
        #expect(after.isEmpty, "said once")
    }

    /// RFC 6762, 8.2: a simultaneous probe whose records win makes this one wait a second and
    /// probe again, under the same name; one whose records lose changes nothing.
    @Test func aSimultaneousProbeThatWinsDefersThisOne() {
        var responder = shown()
        _ = run(&responder, until: at(350))
        let lost = responder.simultaneousProbeHeard(theirsWin: false, at: at(400))
        #expect(!lost && responder.deadline == at(600))
        let deferred = responder.simultaneousProbeHeard(theirsWin: true, at: at(400))
        #expect(deferred && responder.deadline == at(1_050), "the next query")
        let probes = run(&responder, until: at(1_400)).filter { $0.1 != .query }
        #expect(probes.map(\.0) == [at(1_400)] && probes.first?.1 == .probe(unicastResponse: true))
        #expect(responder.instanceName == "Ada")
        _ = run(&responder, until: at(10_000))
        let published = responder.simultaneousProbeHeard(theirsWin: true, at: at(10_000))
        #expect(!published, "once published, a conflict is answered by renaming, not by the tie-break")
    }

    @Test func anotherBrowsersQueryCountsAsThisOnesOwn() {
        var responder = shown()
        _ = run(&responder, until: at(50))
        responder.sameQueryHeard(at: at(900))
        let queries = run(&responder, until: at(4_000)).filter { $0.1 == .query }.map(\.0)
        #expect(queries == [at(2_900)], "the next gap doubles from the query heard")
    }

    /// A carrier's new type to browse starts the queries over: asked at once, then a second later.
    @Test func aNewQuestionIsAskedAtOnceAndTheGapsStartOver() {
        var silent = MDNSResponder(name: "Ada")
        let silentWakes = silent.questionAdded(at: at(0))
        #expect(!silentWakes, "a silent responder asks nothing")
        var responder = shown()
        _ = run(&responder, until: at(8_000))
        let wakes = responder.questionAdded(at: at(8_100))
        #expect(wakes)
        let queries = run(&responder, until: at(10_000)).filter { $0.1 == .query }.map(\.0)
        #expect(queries == [at(8_100), at(9_100)])
    }

    @Test func answersAreMulticastOnceASecondPerNameAndUnicastWithinABudget() {
        var responder = shown()
        let early = responder.reply(to: ["x"], unicastAsked: false, legacy: false, at: at(0))
        #expect(early == .none, "nothing answered before the name is published")
        _ = run(&responder, until: at(2_000))
        let first = responder.reply(to: ["x"], unicastAsked: false, legacy: false, at: at(2_000))
        let again = responder.reply(to: ["x"], unicastAsked: false, legacy: false, at: at(2_500))
        let other = responder.reply(to: ["x", "y"], unicastAsked: false, legacy: false, at: at(2_600))
        let later = responder.reply(to: ["x"], unicastAsked: false, legacy: false, at: at(3_600))
        #expect([first, again, other, later] == [.multicast, .none, .multicast, .multicast])
        let unicast = (0..<30).map {
            responder.reply(to: ["x"], unicastAsked: true, legacy: $0 % 2 == 0, at: at(4_000))
        }
        #expect(unicast.filter { $0 == .unicast }.count + unicast.filter { $0 == .legacyUnicast }.count == 20)
        #expect(unicast.suffix(10).allSatisfy { $0 == .none }, "at most 20 unicast answers a second")
    }

    @Test func hidingOwesAGoodbyeOnlyOncePublished() {
        var probing = shown()
        let probingOwes = probing.hide()
        #expect(!probingOwes)
        var published = shown()
        _ = run(&published, until: at(2_000))
        let publishedOwes = published.hide()
        #expect(publishedOwes)
        let owedAgain = published.hide()
        #expect(published.deadline == nil && !owedAgain)
        let shownAgain = published.show(at: at(3_000), probeAfter: .zero, queryAfter: .zero)
        #expect(shownAgain && published.isProbing)
    }
}
