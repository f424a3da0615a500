import HexKit
import Testing

@testable import HexDaemon
@testable import LocalSendCarrier

/// Which text names which LocalSend device in `hexctl send --to`, `block` and `pair --accept`.
@Suite(.timeLimit(.minutes(1))) struct LocalSendNamesTests {
    private let proven = "localsend:" + String(repeating: "AB", count: 32)
    private let plain = "localsend-http:" + String(repeating: "AB", count: 32)

    @Test func aCertificatesDeviceIsNamedByAliasIDPrefixOrFingerprintPrefix() {
        #expect(LocalSendCarrier.names("pixel", alias: "Pixel", id: proven))
        #expect(LocalSendCarrier.names("localsend:abab", alias: nil, id: proven))
        #expect(LocalSendCarrier.names("ABAB", alias: nil, id: proven))
        #expect(!LocalSendCarrier.names("ABA", alias: nil, id: proven), "4 digits at least")
        #expect(!LocalSendCarrier.names("CDCD", alias: nil, id: proven))
    }

    @Test func aPlainDeviceIsNeverNamedByABareText() {
        // It claims any text: another device's fingerprint, a peer's name or UUID prefix.
        #expect(!LocalSendCarrier.names("ABAB", alias: nil, id: plain))
        #expect(LocalSendCarrier.names("localsend-http:abab", alias: nil, id: plain))
        #expect(LocalSendCarrier.names("Old phone", alias: "old phone", id: plain), "its alias still names it")
        #expect(!LocalSendCarrier.names("localsend:ABAB", alias: nil, id: plain))
    }
}
