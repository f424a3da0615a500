import HexEngine
import Testing

/// Who gets a TLS handshake under a flood, connection by connection on a fake clock. Addresses are
/// strings `"P.N"`: prefix `P`, host `N`.
@Suite(.timeLimit(.minutes(1))) struct HandshakeAdmissionTests {
    typealias Admission = HandshakeAdmission<String>
    private let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .microseconds(Int(seconds * 1_000_000)) }

    private static func admission(capacity: Int = 4_096) -> Admission {
        Admission(capacity: capacity) { String($0.split(separator: ".").first ?? "") }
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

    @Test func aKnownPeersAddressIsAlwaysLetThrough() {
        var admission = Self.admission()
        admission.markKnown("10.7", at: at(0))
        _ = flood(&admission, perSecond: 4_000, seconds: 2, hosts: 192)
        #expect((0..<100).allSatisfy { admission.decide("10.7", at: at(2 + Double($0) / 1_000)) == .known })
        #expect(admission.decide("10.7", at: at(3_601)) != .known, "known for an hour after it was last seen")
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
        // Heard before, it is held to the budgets like the flood: at 400 a second the flood keeps the
        // subnet's bucket dry (at 4,000 its own addresses are held so hard that the subnet's has room).
        _ = flood(&admission, perSecond: 400, seconds: 1, hosts: 192, from: 7)
        let again = admission.decide("10.250", at: at(8))
        #expect(again == .refused(.prefix, newOffence: false), "once heard, it is held to the budgets: \(again)")
    }

    @Test func anotherPrefixIsNotHeldToTheFloodingOne() {
        var admission = Self.admission()
        _ = flood(&admission, perSecond: 4_000, seconds: 2, hosts: 192)
        let other = (0..<20).map { admission.decide("20.\($0)", at: at(2 + Double($0) / 100)) }
        #expect(other.filter { $0 == .stranger }.count == 20)
    }

    @Test func offendersAreForgivenAfterAMinuteAndTheTablesStayBounded() {
        var admission = Self.admission(capacity: 64)
        let burst = Int(admission.budgets.perAddress * admission.budgets.burstSeconds)
        let first = (0...burst).map { _ in admission.decide("10.1", at: at(0)) }
        #expect(first.last == .refused(.address, newOffence: true))
        #expect(admission.decide("10.1", at: at(0.1)) == .refused(.address, newOffence: false))
        #expect(admission.decide("10.1", at: at(61)) == .stranger, "its bucket refilled; an offender no more")
        // A flood of invented addresses (an IPv6 attacker) costs no more memory than capacity.
        let invented = flood(&admission, perSecond: 4_000, seconds: 1, hosts: 4_000, from: 100)
        let admitted = invented.filter { $0 == .stranger }.count
        let budgets = admission.budgets
        #expect(admitted <= Int((budgets.perPrefix + budgets.newcomers) * (budgets.burstSeconds + 1)))
    }
}
