import Glibc
import Synchronization
import Testing

@testable import HexNet

@Suite(.timeLimit(.minutes(5))) struct PartialLineBudgetTests {
    private func socket() throws -> Socket { try Socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue)) }

    @Test func theLargestHoldersAreCutFirstAndCountedUntilTheyLetGo() throws {
        let cut = Locked<[Int]>([])
        let budget = PartialLineBudget(limit: 1_000) { _, bytes in cut.withLock { $0.append(bytes) } }
        let (small, medium, large, newcomer) = (try socket(), try socket(), try socket(), try socket())
        budget.hold(100, by: small)
        budget.hold(300, by: medium)
        budget.hold(500, by: large)
        #expect(budget.total == 900 && cut.withLock { $0 }.isEmpty)
        budget.hold(200, by: newcomer)
        #expect(cut.withLock { $0 } == [500], "only the largest, which is enough")
        #expect(budget.total == 1_100, "the cut holder still holds its memory until it lets go")
        budget.hold(50, by: newcomer)
        #expect(cut.withLock { $0 } == [500], "a holder already cut is not cut again")
        budget.release(large)
        #expect(budget.total == 450)
        budget.release(small)
        budget.release(medium)
        budget.release(newcomer)
        #expect(budget.total == 0)
    }
}
