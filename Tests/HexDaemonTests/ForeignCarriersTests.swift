import HexEngine
import Testing

@testable import HexDaemon

/// What a send to a device of another kind meets while hexd's LocalSend and KDE Connect carriers
/// start (their keys may be made then): it waits, where a carrier that is off refuses it.
@Suite(.timeLimit(.minutes(1))) struct ForeignCarriersTests {
    @Test func aSendWaitsForACarrierStartingAndIsRefusedByOneThatIsOff() {
        let carriers = ForeignCarriers(localSend: .starting, kdeConnect: .off("--kdeconnect off"))
        #expect(carriers.localSend == nil && carriers.kdeConnect == nil)
        #expect(carriers.starting == ["LocalSend"])
        #expect(carriers.sending.map(\.takesIDs) == [true, false], "a device of a carrier starting may be named")
        #expect(carriers.localSendMissing == .undelivered("LocalSend is starting"), "the outbox tries again")
        #expect(carriers.kdeConnectMissing == .refused("KDE Connect is off here (--kdeconnect off)"))
        carriers.setLocalSend(.off("it could not start: the log says why"))
        #expect(carriers.starting == nil && carriers.sending.allSatisfy { !$0.takesIDs })
        #expect(carriers.localSendMissing == .refused("LocalSend is off here (it could not start: the log says why)"))
    }
}
