import HexEngine
import HexNet
import Testing

@testable import HexDaemon
@testable import KDEConnectCarrier
@testable import LocalSendCarrier

/// Each carrier reads its discovery datagrams at the rates Protocol.md gives: LocalSend's
/// announcements 20 a second from one address in bursts of 40 (section 16.2), KDE Connect's
/// identities 10 a second in bursts of 20 (section 17).
@Suite(.timeLimit(.minutes(1))) struct CarrierDatagramBudgetTests {
    @Test(arguments: [
        (LocalSendCarrier.announcementBudget(), 20), (KDEConnectCarrier.identityBudget(), 10),
    ])
    func aCarrierReadsOneAddressAtItsDocumentedRate(budget: DatagramBudget<IPAddress>, perSecond: Int) throws {
        var budget = budget
        let source = try #require(IPAddress("192.0.2.7"))
        let start = ContinuousClock.now
        let burst = (0..<1_000).filter { _ in budget.admit(source, at: start) }.count
        #expect(burst == perSecond * 2)
        let secondLater = (0..<1_000).filter { _ in budget.admit(source, at: start + .seconds(1)) }.count
        #expect(secondLater == perSecond)
    }
}
