import HexEngine
import HexKit
import Testing

/// How one connection's pipelined lines are acted on, step by step.
@Suite(.timeLimit(.minutes(5))) struct InboundRoundTests {
    private static func envelope(_ operation: OperationType, _ id: String) -> Envelope {
        Envelope(versionID: "2.0", operationType: operation, messageID: id)
    }

    private let store1 = envelope(.store, "s1")
    private let store2 = envelope(.store, "s2")
    private let alert = envelope(.alert, "a1")
    private let pair = envelope(.pair, "p1")
    private let fetch = envelope(.fetch, "f1")

    /// Feeds every line, as the server does, and returns the steps in order and how many lines
    /// the round took.
    private func steps(
        _ lines: [Result<Envelope, EnvelopeDecodingError>], pairing: Bool = true, fetch: Bool = true
    ) -> (steps: [InboundRound.Step], taken: Int) {
        var round = InboundRound(servesPairing: pairing, servesFetch: fetch)
        var steps: [InboundRound.Step] = []
        var taken = 0
        for line in lines where !round.isOver {
            steps += round.take(line)
            taken += 1
        }
        return (steps + round.finish(), taken)
    }

    @Test func storesAndAlertsGoToTheStoreTogether() {
        let result = steps([.success(store1), .success(alert), .success(store2)])
        #expect(result.steps == [.receive([store1, alert, store2])])
        #expect(result.taken == 3)
    }

    @Test func aPairIsActedOnAloneAfterWhatCameBeforeIt() {
        let result = steps([.success(store1), .success(pair), .success(store2), .success(alert)])
        #expect(result.steps == [.receive([store1]), .pair(pair), .receive([store2, alert])])
    }

    @Test func aFetchEndsTheRoundAndTheLinesAfterItWait() {
        let result = steps([.success(store1), .success(fetch), .success(store2), .success(pair)])
        #expect(result.steps == [.receive([store1]), .fetch(fetch)])
        #expect(result.taken == 2, "the Store and the Pair after the Fetch are the next round's")
        var round = InboundRound(servesPairing: true, servesFetch: true)
        _ = round.take(.success(fetch))
        let afterFetch = round.take(.success(store2))
        #expect(afterFetch.isEmpty && round.finish().isEmpty, "an ended round takes nothing more")
    }

    @Test func anUnreadableLineIsAnsweredInItsPlace() {
        let result = steps([.success(store1), .failure(.malformedJSON), .success(store2)])
        #expect(result.steps == [.receive([store1]), .unreadable(.malformedJSON), .receive([store2])])
    }

    /// A daemon playing a legacy peer serves neither: the envelopes join the run and the store
    /// answers them as unsupported, in their place.
    @Test func pairAndFetchJoinTheRunWhereTheyAreNotServed() {
        let result = steps(
            [.success(store1), .success(pair), .success(fetch), .success(alert)], pairing: false,
            fetch: false)
        #expect(result.steps == [.receive([store1, pair, fetch, alert])])
        #expect(result.taken == 4)
    }

    @Test func nothingTakenIsNothingToDo() {
        #expect(steps([]).steps.isEmpty)
        let pairs = steps([.success(pair), .success(pair)])
        #expect(pairs.steps == [.pair(pair), .pair(pair)], "no empty run is handed to the store")
    }
}
