import HexCommandLine
import HexEngine
import Testing

@testable import HexDaemon
@testable import LocalSendCarrier

/// What a send to a device of another kind meets while hexd's LocalSend and KDE Connect carriers
/// start (their keys may be made then): it waits, where a carrier that is off refuses it.
@Suite(.timeLimit(.minutes(1))) struct ForeignCarriersTests {
    @Test func aSendWaitsForACarrierStartingAndIsRefusedByOneThatIsOff() {
        var configuration = DaemonConfiguration(dataDirectory: DataDirectory(explicit: "/unused", environment: [:]))
        (configuration.kdeConnect.enabled, configuration.quickShare.enabled) = (false, false)
        let carriers = ForeignCarrierStart.slots(configuration)
        #expect(carriers.up.isEmpty)
        #expect(carriers.entries.map { $0.kind.name } == ["LocalSend", "KDE Connect", "Quick Share"])
        #expect(carriers.starting == ["LocalSend"])
        #expect(
            carriers.entries.map(\.takesIDs) == [true, false, false], "a device of a carrier starting may be named")
        #expect(
            carriers.entries.map(\.missing)
                == [
                    .undelivered("LocalSend is starting"), .refused("KDE Connect is off here (--kdeconnect off)"),
                    .refused("Quick Share is off here (--quickshare off)"),
                ],
            "a send to a carrier starting is tried again; to one that is off, refused")
        #expect(
            carriers.entries.map { $0.kind.owns("kdeconnect:0123456789abcdef0123456789abcdef") } == [
                false, true, false,
            ])
        #expect(carriers.entries.map { $0.kind.owns("quickshare:AB12") } == [false, false, true])
        carriers.set(LocalSendCarrier.self, .off("it could not start: the log says why"))
        #expect(carriers.starting == nil && carriers.entries.allSatisfy { !$0.takesIDs })
        #expect(
            carriers.entries.first?.missing == .refused("LocalSend is off here (it could not start: the log says why)"))
    }
}
