import HexEngine
import Testing

/// The budget foreign discovery datagrams are read within, with the clock passed in.
@Suite(.timeLimit(.minutes(1))) struct DatagramBudgetTests {
    private let start = ContinuousClock.now

    /// How many of `count` datagrams from `source` are admitted at `now`.
    private func admitted(
        _ count: Int, from source: String, into budget: inout DatagramBudget<String>, at now: ContinuousClock.Instant
    ) -> Int {
        (0..<count).filter { _ in budget.admit(source, at: now) }.count
    }

    @Test func oneAddressGetsTwiceTheRateAtOnceThenTheRate() {
        var budget = DatagramBudget<String>(rate: 20)
        #expect(admitted(100, from: "a", into: &budget, at: start) == 40)
        #expect(admitted(100, from: "a", into: &budget, at: start + .seconds(1)) == 20)
        #expect(admitted(100, from: "b", into: &budget, at: start + .seconds(1)) == 40, "another address has its own")
    }

    @Test func manyAddressesTogetherAreHeldToTheTotal() {
        var budget = DatagramBudget<String>(rate: 10)
        let total = (0..<1_000).map { admitted(1, from: "host \($0)", into: &budget, at: start) }.reduce(0, +)
        #expect(Double(total) == 10 * DatagramBudget<String>.totalFactor * 2)
        let nextSecond = (1_000..<2_000).map { admitted(1, from: "host \($0)", into: &budget, at: start + .seconds(1)) }
        #expect(Double(nextSecond.reduce(0, +)) == 10 * DatagramBudget<String>.totalFactor)
    }

    @Test func forgottenAddressesStartAgainFull() {
        var budget = DatagramBudget<String>(rate: 1, capacity: 2)
        #expect(admitted(5, from: "a", into: &budget, at: start) == 2)
        _ = admitted(1, from: "b", into: &budget, at: start)
        _ = admitted(1, from: "c", into: &budget, at: start)
        #expect(admitted(5, from: "a", into: &budget, at: start) == 2, "a was forgotten past the capacity")
    }
}
