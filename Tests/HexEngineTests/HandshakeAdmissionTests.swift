import HexEngine
import Testing

/// Who gets a TLS handshake under a flood, connection by connection on a fake clock. Addresses are
/// strings `"P.N"`: prefix `P`, host `N`.
@Suite(.timeLimit(.minutes(1))) struct HandshakeAdmissionTests {
    typealias Admission = HandshakeAdmission<String>
    private let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .microseconds(Int(seconds * 1_000_000)) }

    /// Strangers get 32 handshakes a second in all: an address 3.2, a prefix 16, newcomers 3.2 more.
    private static func admission(capacity: Int = 4_096) -> Admission {
        Admission(budgets: .init(strangerHandshakes: 32), capacity: capacity) {
            String($0.split(separator: ".").first ?? "")
        }
    }

    /// `perSecond` connections a second for `seconds` from `hosts` addresses of prefix `prefix`,
    /// in turn, starting at `from`; the decisions, in order.
    private func flood(
        _ admission: inout Admission, perSecond: Int, seconds: Double, hosts: Int, prefix: String = "10",
        from: Double = 0
    ) -> [Admission.Decision] {
        (0..<Int(Double(perSecond) * seconds)).map { index in
            admission.decide("\(prefix).\(index % hosts)", at: at(from + Double(index) / Double(perSecond)))
        }
    }

    @Test func aFloodOfStrangersGetsBoundedHandshakesAndEachOffenderIsSaidOnce() {
        var admission = Self.admission()
        let decisions = flood(&admission, perSecond: 4_000, seconds: 5, hosts: 192)
        let admitted = decisions.filter { $0 == .stranger }.count
        let budgets = admission.budgets
        // The prefix's bucket (its burst, then its rate) bounds them, plus the newcomers' reserve.
        let bound = budgets.perPrefix * (budgets.burstSeconds + 5) + budgets.newcomers * (budgets.burstSeconds + 5)
        #expect(admitted <= Int(bound) && admitted >= Int(budgets.perPrefix * 5), "\(admitted) of 20,000")
        let offences = decisions.filter { $0 == .refused(.address, newOffence: true) }.count
        #expect(offences == 192, "each address becomes an offender once: \(offences)")
    }

    @Test func aKnownPeersAddressIsLetThroughWithinItsOwnBudget() {
        var admission = Self.admission()
        admission.markKnown("10.7", at: at(0))
        _ = flood(&admission, perSecond: 4_000, seconds: 2, hosts: 192)
        #expect((0..<100).allSatisfy { admission.decide("10.7", at: at(2 + Double($0) / 1_000)) == .known })
        // A known peer turned hostile is bounded too: ten times all strangers' rate, bursts of 4 s.
        let hostile = (0..<8_000).map { admission.decide("10.7", at: at(3 + Double($0) / 4_000)) }
        let budgets = admission.budgets
        let bound = Int(budgets.perKnownAddress * (budgets.burstSeconds + 2))
        let admitted = hostile.filter { $0 == .known }.count
        #expect(admitted < 8_000 && admitted <= bound, "\(admitted) of 8,000 in 2 s")
        #expect(admission.decide("10.7", at: at(3_610)) != .known, "known for an hour after it was last seen")
    }

    @Test(arguments: [4_000, 400])
    func anHonestStrangerGetsThroughDuringTheFlood(perSecond: Int) {
        var admission = Self.admission()
        // A flood comes again and again from the addresses it holds (fast enough to run their own
        // buckets dry, or slow enough not to): after its first second, none of them is new.
        _ = flood(&admission, perSecond: perSecond, seconds: 3, hosts: 192)
        // A new address in the same prefix, whose bucket and the total are drained by the flood,
        // takes the newcomers' reserve, which the flood's addresses cannot touch any more.
        var admitted = 0
        for second in 0..<4 {
            let base = 3 + Double(second)
            _ = flood(&admission, perSecond: perSecond, seconds: 0.5, hosts: 192, from: base)
            if admission.decide("10.\(250 + second)", at: at(base + 0.5)) == .stranger { admitted += 1 }
        }
        #expect(admitted == 4, "a newcomer's first connection each second: \(admitted) of 4")
        // Past its first connections, it is held to the budgets like the flood: at 400 a second the
        // flood keeps the subnet's bucket dry (at 4,000 its own addresses are held so hard that the
        // subnet's has room).
        _ = flood(&admission, perSecond: 400, seconds: 1, hosts: 192, from: 7)
        let tries = (0..<3).map { admission.decide("10.250", at: at(8 + Double($0) / 1_000)) }
        #expect(tries.last == .refused(.prefix, newOffence: false), "a newcomer no more: \(tries)")
    }

    @Test func anotherPrefixIsNotHeldToTheFloodingOne() {
        var admission = Self.admission()
        _ = flood(&admission, perSecond: 4_000, seconds: 2, hosts: 192)
        let other = (0..<20).map { admission.decide("20.\($0)", at: at(2 + Double($0) / 100)) }
        #expect(other.filter { $0 == .stranger }.count == 20)
    }

    @Test func anOffenceIsSaidOnceAMinuteAndTheTablesStayBounded() {
        var admission = Self.admission(capacity: 64)
        let burst = Int(admission.budgets.perAddress * admission.budgets.burstSeconds)
        let first = (0...burst).map { _ in admission.decide("10.1", at: at(0)) }
        #expect(first.last == .refused(.address, newOffence: true))
        #expect(admission.decide("10.1", at: at(0)) == .refused(.address, newOffence: false))
        // Dry again 30 s on (its bucket drained again): still the same offence, said once.
        _ = (0...burst).map { _ in admission.decide("10.1", at: at(30)) }
        #expect(admission.decide("10.1", at: at(30)) == .refused(.address, newOffence: false))
        // A minute after it was last dry, running dry is a new offence, said again.
        let later = (0...burst).map { _ in admission.decide("10.1", at: at(91)) }
        #expect(later.first == .stranger && later.last == .refused(.address, newOffence: true))
        // A flood of invented addresses (an IPv6 attacker) costs no more memory than capacity.
        let invented = flood(&admission, perSecond: 4_000, seconds: 1, hosts: 4_000, from: 100)
        #expect(admission.remembered == 64, "every table holds at most its capacity")
        let admitted = invented.filter { $0 == .stranger }.count
        let budgets = admission.budgets
        #expect(admitted <= Int((budgets.perPrefix + budgets.newcomers) * (budgets.burstSeconds + 1)))
    }

    @Test func aNewcomerRefusedOnceGetsThroughWhenItTriesAgain() {
        var admission = Self.admission()
        // Strangers new to hexd drain the subnet's bucket, the total and the newcomers' reserve.
        _ = (0..<200).map { admission.decide("10.\($0)", at: at(0)) }
        let first = admission.decide("10.250", at: at(0.01))
        #expect(first == .refused(.prefix, newOffence: false))
        // A second later the reserve has refilled a little, and it is still a newcomer.
        #expect(admission.decide("10.250", at: at(1)) == .stranger)
    }

    @Test func theDaemonsBudgetsAreTheRatiosOfOneRate() {
        let budgets = Admission.Budgets(strangerHandshakes: 100)
        #expect(budgets.total == 100 && budgets.perPrefix == 50 && budgets.perAddress == 10)
        #expect(budgets.newcomers == 10 && budgets.perKnownAddress == 1_000 && budgets.burstSeconds == 4)
        let least = Admission.Budgets(strangerHandshakes: 5)
        #expect(least.perAddress == 1 && least.newcomers == 1 && least.perPrefix == 2.5, "each at least one")
    }
}

/// The bounded tables the admission is made of.
@Suite(.timeLimit(.minutes(1))) struct BoundedTablesTests {
    private let start = ContinuousClock.now

    @Test func aBucketTableForgetsTheKeyUsedLongestAgo() {
        var table = BucketTable<Int>(rate: 1, burst: 1, capacity: 2)
        let (one, two) = (table.take(1, at: start), table.take(2, at: start))
        let oneAgain = table.take(1, at: start)
        #expect(one && two && !oneAgain, "1's bucket is dry")
        let three = table.take(3, at: start)
        #expect(three && table.count == 2, "3 takes the place of 2, used longest ago")
        let (twoAgain, threeAgain) = (table.take(2, at: start), table.take(3, at: start))
        #expect(twoAgain, "2 starts again with a full bucket")
        #expect(!threeAgain, "3 was kept, its bucket dry")
    }

    @Test func anExpiringSetCountsInsertionsForgetsTheOldestAndExpires() {
        var set = ExpiringSet<Int>(lifetime: .seconds(10), capacity: 2)
        set.insert(1, at: start)
        set.insert(1, at: start + .seconds(5))
        let counted = set.insertions(of: 1, at: start + .seconds(14))
        #expect(counted == 2, "ten seconds from its last insertion")
        let expired = !set.contains(1, at: start + .seconds(15))
        #expect(expired)
        set.insert(2, at: start)
        set.insert(3, at: start)
        set.insert(4, at: start)
        let (two, four) = (set.contains(2, at: start), set.contains(4, at: start))
        #expect(set.count == 2 && !two && four, "2, inserted longest ago, went for 4")
    }
}
