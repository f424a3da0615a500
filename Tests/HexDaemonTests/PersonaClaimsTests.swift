import HexEngine
import HexHarness
import HexKit
import HexTLS
import HexTestSupport
import KDEConnectCore
import LocalSendCore
import Testing

@testable import HexCarrier
@testable import HexDaemon

/// A hexd's claim on its LocalSend and KDE Connect personas: what makes another hexd leave them to
/// hexd's own protocol, and what no stranger can forge to hide a device or pass for a hexd.
@Suite(.timeLimit(.minutes(2))) struct PersonaClaimsTests {
    private static let phone = "kdeconnect:0123456789abcdef0123456789abcdef"
    private static let persona = "kdeconnect:fedcba9876543210fedcba9876543210"

    private static func claims(_ name: String, in directory: TemporaryDirectory) throws -> PersonaClaims {
        let (identity, _) = try TLSIdentity.loadOrCreate(
            keyPath: directory.file(name + ".key"), certificatePath: directory.file(name + ".crt"), commonName: name)
        return PersonaClaims(signer: identity)
    }

    /// The claim as another daemon reads it off the wire, inside a KDE Connect identity.
    private static func received(_ claim: PersonaClaim, deviceID: String) throws -> PersonaClaim? {
        let identity = KDEConnectIdentity(
            deviceID: deviceID, name: "Grace", deviceType: .desktop, protocolVersion: 8,
            incomingCapabilities: [], outgoingCapabilities: [], tcpPort: 1716, hexdClaim: claim)
        let line = identity.encoded(id: 1).dropLast()
        return try KDEConnectIdentity(KDEConnectPacket.decode(line), broadcast: true).hexdClaim
    }

    @Test func aClaimHoldsForItsPersonaAloneAndNoOneElseCanMakeIt() throws {
        let directory = try TemporaryDirectory()
        let grace = try Self.claims("grace", in: directory)
        let ada = try Self.claims("ada", in: directory)
        let eve = try Self.claims("eve", in: directory)
        let claim = try #require(grace.claim(persona: Self.persona))
        let heard = try #require(try Self.received(claim, deviceID: String(Self.persona.dropFirst(11))))
        #expect(heard == claim, "the claim travels whole in the identity")
        #expect(ada.isHexd(Self.persona, claim: heard), "Grace's persona is hers: Ada leaves it to hexd's protocol")
        #expect(!ada.isHexd(Self.persona, claim: nil), "an identity without a claim, as every app's, is a device")

        // Copied into a phone's identity, Grace's claim does not hold: it signed another ID.
        #expect(!ada.isHexd(Self.phone, claim: heard))
        // Eve claims the phone as her persona: her claim holds for her, but the phone's own
        // identity carries none, so it stays a device (`isHexd` is asked of each identity heard).
        let eveOnPhone = try #require(eve.claim(persona: Self.phone))
        #expect(ada.isHexd(Self.phone, claim: eveOnPhone), "Eve's forged identity of the phone is left out")
        #expect(!ada.isHexd(Self.phone, claim: nil), "the phone itself is not hidden by Eve's claim")

        // Eve signs with her key but names Grace as the peer: her key derives another ID.
        var posing = eveOnPhone
        posing.peer = claim.peer
        #expect(!ada.isHexd(Self.phone, claim: posing))
        // Grace's key with Eve's signature: the signature does not hold.
        var mixed = claim
        mixed.signature = eveOnPhone.signature
        #expect(!ada.isHexd(Self.persona, claim: mixed))
        var garbled = claim
        garbled.key = "zz"
        #expect(!ada.isHexd(Self.persona, claim: garbled))
    }

    @Test func newClaimsAreCheckedWithinABudgetAndKnownOnesCostNothing() throws {
        let directory = try TemporaryDirectory()
        let grace = try Self.claims("grace", in: directory)
        let eve = try Self.claims("eve", in: directory)
        let ada = try Self.claims("ada", in: directory)
        let now = ContinuousClock.now
        let good = try #require(grace.claim(persona: Self.persona))
        #expect(ada.isHexd(Self.persona, claim: good, now: now))
        // Forged claims (Eve's key, Grace's ID) use up the budget of checks for this moment.
        var forged = try #require(eve.claim(persona: Self.phone))
        forged.peer = good.peer
        let budget = Int(PersonaClaims.checksPerSecond * 2)
        let refused = (0..<budget).filter { _ in !ada.isHexd(Self.phone, claim: forged, now: now) }.count
        #expect(refused == budget - 1, "every forged claim checked until the budget ran out")
        #expect(ada.isHexd(Self.phone, claim: forged, now: now), "past it, a claim is left out unchecked")
        #expect(!ada.isHexd(Self.phone, claim: nil, now: now), "a device without a claim is never affected")
        #expect(ada.isHexd(Self.persona, claim: good, now: now), "a claim checked before needs no budget")
        #expect(
            !ada.isHexd(Self.phone, claim: forged, now: now + .seconds(1)), "a second later, checks resume")
    }

    @Test func aLocalSendDescriptionCarriesTheClaimAndAppsFieldsStayAsTheyWere() throws {
        let directory = try TemporaryDirectory()
        let grace = try Self.claims("grace", in: directory)
        let fingerprint = String(repeating: "AB", count: 32)
        let claim = try #require(grace.claim(persona: "localsend:" + fingerprint))
        let device = LocalSendDevice(
            alias: "Grace", version: "2.2", deviceModel: "hexd", deviceType: .headless, fingerprint: fingerprint,
            port: 53317, scheme: .https, hexdClaim: claim)
        let read = try #require(LocalSendDevice.decode(device.encoded()))
        #expect(read == device)
        #expect(grace.isHexd(LocalSendPresence<String>.id(of: read), claim: read.hexdClaim))
        var plain = read
        plain.scheme = .http
        #expect(
            !grace.isHexd(LocalSendPresence<String>.id(of: plain), claim: plain.hexdClaim),
            "the same claim on a device with its encryption off names another ID, and does not hold")
    }
}
