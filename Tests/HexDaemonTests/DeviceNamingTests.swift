import HexCarrier
import HexKit
import KDEConnectCore
import LocalSendCore
import Testing

@testable import QuickShareCarrier

/// Which text names which device in `hexctl send --to`, `pair` and `decline`: one rule for every
/// carrier (`DeviceNaming`), read here with each carrier's own ID forms.
@Suite(.timeLimit(.minutes(1))) struct DeviceNamingTests {
    struct Device {
        let id: String
        let name: String
    }

    static func named(_ text: String, among devices: [Device], forms: [PeerIDForm]) -> String? {
        DeviceNaming.device(named: text, among: devices, forms: forms, id: \.id, name: \.name)?.id
    }

    static let forms = LocalSendID.forms + [KDEConnectID.form, QuickShareID.form]
    let proven = Device(id: "localsend:" + String(repeating: "AB", count: 32), name: "Pixel")
    let plain = Device(id: "localsend-http:" + String(repeating: "CD", count: 32), name: "old phone")
    let kde = Device(id: "kdeconnect:" + String(repeating: "9b", count: 16), name: "Laptop")
    let quick = Device(id: "quickshare:AB12", name: "Quick Share device AB12")

    @Test func aDeviceIsNamedByItsIDItsNameOrAPrefixOfItsID() {
        PeerIDForms.register(Self.forms)
        let devices = [proven, plain, kde, quick]
        for device in devices {
            #expect(Self.named(device.id.uppercased(), among: devices, forms: Self.forms) == device.id, "its ID")
            #expect(Self.named(" " + device.name.uppercased(), among: devices, forms: Self.forms) == device.id)
        }
        #expect(Self.named("localsend:abab", among: devices, forms: Self.forms) == proven.id)
        #expect(Self.named("ABAB", among: devices, forms: Self.forms) == proven.id, "a fingerprint's prefix alone")
        #expect(Self.named("ABA", among: devices, forms: Self.forms) == nil, "4 characters at least")
        #expect(Self.named("KDEConnect:9B9B", among: devices, forms: Self.forms) == kde.id)
        #expect(Self.named("9b9b9b", among: devices, forms: Self.forms) == kde.id, "a key proves it: its ID alone")
        #expect(Self.named("quickshare:ab12", among: devices, forms: Self.forms) == quick.id)
    }

    @Test func aDeviceNothingProvesIsNeverNamedByABareText() {
        PeerIDForms.register(Self.forms)
        // It claims any text: another device's fingerprint, a peer's name or UUID prefix.
        #expect(Self.named("CDCD", among: [plain], forms: Self.forms) == nil)
        #expect(Self.named("localsend-http:cdcd", among: [plain], forms: Self.forms) == plain.id)
        #expect(Self.named("localsend:CDCD", among: [plain], forms: Self.forms) == nil, "not its form")
        #expect(Self.named("AB1", among: [quick], forms: Self.forms) == nil)
    }

    @Test func aWholeIDNoDeviceHasOrAnotherKindsNamesNone() {
        PeerIDForms.register(Self.forms)
        let alike = Device(id: "kdeconnect:" + String(repeating: "9c", count: 16), name: kde.id)
        #expect(Self.named(kde.id, among: [alike], forms: Self.forms) == nil, "an ID is no name")
        let uuid = "6F9619FF-8B86-4011-B42D-00C04FC964FF"
        let named = Device(id: quick.id, name: uuid)
        #expect(Self.named(uuid, among: [named], forms: Self.forms) == nil, "a hexd peer's ID")
        #expect(Self.named(proven.id, among: [kde], forms: [KDEConnectID.form]) == nil, "another kind's")
    }

    @Test func aNameOrPrefixTwoShareNamesNeither() {
        let twin = Device(id: "localsend:" + String(repeating: "AB", count: 31) + "CD", name: "Pixel")
        #expect(Self.named("Pixel", among: [proven, twin], forms: Self.forms) == nil)
        #expect(Self.named("ABABAB", among: [proven, twin], forms: Self.forms) == nil)
        #expect(Self.named(twin.id, among: [proven, twin], forms: Self.forms) == twin.id)
        #expect(Self.named("", among: [proven], forms: Self.forms) == nil)
    }

    @Test func anOfferIsNamedByItsKeyWithoutAForm() {
        let offer = Device(id: "quickshare-offer:12", name: "Pixel 8")
        #expect(Self.named("QuickShare-Offer:12", among: [offer], forms: []) == offer.id)
        #expect(Self.named("pixel 8", among: [offer], forms: []) == offer.id)
        #expect(Self.named("quickshare-offer:1", among: [offer], forms: []) == nil, "another offer's key")
    }
}
