import HexCommandLine
import HexEngine
import HexKit
import Testing

@testable import HexDaemon
@testable import KDEConnectCarrier
@testable import LocalSendCarrier
@testable import QuickShareCarrier

/// What a send to a device of another kind meets while hexd's LocalSend and KDE Connect carriers
/// start (their keys may be made then): it waits, where a carrier that is off refuses it.
@Suite(.timeLimit(.minutes(1))) struct ForeignCarriersTests {
    /// Each carrier's kind has the form of a kind's name, its ID forms are its own kind's and start
    /// with its name, no two carriers share a kind or a prefix, and the daemon registers them all.
    @Test func everyCarrierDeclaresItsKindAndIDFormsApart() {
        let kinds = ForeignCarrierStart.launches.map { $0.kind.kind }
        #expect(Set(kinds).count == kinds.count && !kinds.contains(.hexd))
        ForeignCarrierStart.registerIDForms()
        var prefixes: Set<String> = []
        for launch in ForeignCarrierStart.launches {
            let kind = launch.kind.kind
            #expect(PeerKind(rawValue: kind.rawValue) == kind, "\(kind)")
            #expect(!launch.kind.idForms.isEmpty, "\(kind)")
            for form in launch.kind.idForms {
                #expect(form.kind == kind && form.prefix.hasPrefix(kind.rawValue) && form.prefix.hasSuffix(":"))
                #expect(prefixes.insert(form.prefix).inserted, "\(form.prefix) is another carrier's")
                #expect(PeerIDForms.form(of: form.prefix.uppercased() + "x")?.prefix == form.prefix, "registered")
            }
        }
    }

    @Test func eachCarriersOptionsAreReadIntoItsSettingsFromEverySource() throws {
        let request = try DaemonConfiguration.resolve(
            arguments: ["--data-dir", "/unused", "--quickshare", "off", "--localsend-port", "53000"],
            environment: ["HEXD_KDECONNECT_PORT": "1717"],
            readFile: { _ in "quickshare-files = take\n" })
        guard case .run(let configuration) = request else {
            Issue.record("not a run: \(request)")
            return
        }
        let quickShare = configuration.carriers[QuickShareSettings.self]
        #expect(!quickShare.enabled && quickShare.takesFilesUnasked, "the flag and the config file")
        #expect(configuration.carriers[LocalSendSettings.self].port == 53000)
        #expect(configuration.carriers[KDEConnectSettings.self].port == 1717, "the environment")
        #expect(configuration.carriers[KDEConnectSettings.self].enabled, "what no source sets keeps its default")
        #expect(ForeignCarrierStart.slots(configuration).starting == ["LocalSend", "KDE Connect"])
        #expect(throws: UsageError.self) {
            try DaemonConfiguration.resolve(arguments: ["--quickshare-files", "maybe"], environment: [:])
        }
    }

    @Test func aSendWaitsForACarrierStartingAndIsRefusedByOneThatIsOff() {
        var configuration = DaemonConfiguration(dataDirectory: DataDirectory(explicit: "/unused", environment: [:]))
        configuration.carriers[KDEConnectSettings.self].enabled = false
        configuration.carriers[QuickShareSettings.self].enabled = false
        let carriers = ForeignCarrierStart.slots(configuration)
        #expect(carriers.up.isEmpty)
        #expect(carriers.entries.map { $0.kind.name } == ["LocalSend", "KDE Connect", "Quick Share"])
        #expect(carriers.starting == ["LocalSend"])
        #expect(
            carriers.entries.map(\.takesIDs) == [true, false, false], "a device of a carrier starting may be named")
        #expect(
            carriers.entries.map(Self.missing)
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
            carriers.entries.first.flatMap(Self.missing)
                == .refused("LocalSend is off here (it could not start: the log says why)"))
    }

    /// Why a send to one of the entry's devices cannot go now; nil when its carrier is up.
    private static func missing(_ entry: CarrierEntry) -> SendError? {
        do {
            _ = try entry.up()
            return nil
        } catch {
            return error
        }
    }
}
