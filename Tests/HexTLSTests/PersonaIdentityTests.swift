import Glibc
import HexHarness
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

/// The persona shown to LocalSend devices: RSA-2048 as the apps make, its fingerprint the
/// SHA-256 of its certificate as `openssl` computes it, kept across restarts, and never hexd's
/// Ed25519 device identity.
@Suite(.timeLimit(.minutes(2))) struct PersonaIdentityTests {
    private static func persona(in directory: TemporaryDirectory) throws -> (PersonaIdentity, created: Bool) {
        try PersonaIdentity.loadOrCreate(
            keyPath: directory.file("localsend.key"), certificatePath: directory.file("localsend.crt"),
            commonName: "hexd", label: "LocalSend")
    }

    @Test func aPersonaIsAnRSAKeyMadeOnceAndKept() async throws {
        let directory = try TemporaryDirectory()
        let (made, created) = try Self.persona(in: directory)
        #expect(created)
        var status = stat()
        #expect(stat(directory.file("localsend.key"), &status) == 0 && status.st_mode & 0o777 == 0o600)
        let (reloaded, createdAgain) = try Self.persona(in: directory)
        #expect(!createdAgain && reloaded.fingerprint == made.fingerprint, "a restart keeps the persona")

        let text = try await PackageExecutable.run(
            try ExternalTool.require("openssl"), ["x509", "-in", directory.file("localsend.crt"), "-noout", "-text"])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("Public-Key: (2048 bit)"), "\(text.standardOutput.prefix(600))")
        #expect(text.standardOutput.contains("sha256WithRSAEncryption"))
        let der = directory.file("localsend.der")
        _ = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            ["x509", "-in", directory.file("localsend.crt"), "-outform", "DER", "-out", der])
        let digest = try await PackageExecutable.run(
            try ExternalTool.require("openssl"), ["dgst", "-sha256", "-r", der])
        #expect(digest.standardOutput.hasPrefix(made.fingerprint.description + " "), "\(digest.standardOutput)")
    }

    /// KDE Connect's persona: an EC P-256 key, its certificate signed with SHA-512 and naming
    /// O=KDE, OU=KDE Connect and the device ID as its common name, which reads back after a restart.
    @Test func aKDEConnectPersonaIsAP256KeyNamedByItsDeviceID() async throws {
        let directory = try TemporaryDirectory()
        let deviceID = "0123456789abcdef0123456789abcdef"
        func persona() throws -> (PersonaIdentity, created: Bool) {
            try PersonaIdentity.loadOrCreate(
                keyPath: directory.file("kdeconnect.key"), certificatePath: directory.file("kdeconnect.crt"),
                kind: .p256, commonName: deviceID, organization: "KDE", organizationalUnit: "KDE Connect",
                label: "KDE Connect")
        }
        let (made, created) = try persona()
        #expect(created && made.commonName == deviceID)
        let (reloaded, createdAgain) = try persona()
        #expect(!createdAgain && reloaded.commonName == deviceID && reloaded.fingerprint == made.fingerprint)
        #expect(reloaded.publicKeyDER == made.publicKeyDER && (made.publicKeyDER?.count ?? 0) == 91, "P-256 SPKI")
        let text = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            ["x509", "-in", directory.file("kdeconnect.crt"), "-noout", "-text", "-nameopt", "RFC2253"])
        #expect(text.standardOutput.contains("Public-Key: (256 bit)") && text.standardOutput.contains("prime256v1"))
        #expect(text.standardOutput.contains("ecdsa-with-SHA512"), "\(text.standardOutput.prefix(800))")
        #expect(text.standardOutput.contains("Subject: CN=\(deviceID),OU=KDE Connect,O=KDE"))
        #expect(throws: TLSError.self, "a P-256 key is no LocalSend persona") {
            try PersonaIdentity.loadOrCreate(
                keyPath: directory.file("kdeconnect.key"), certificatePath: directory.file("kdeconnect.crt"),
                commonName: "hexd", label: "LocalSend")
        }
    }

    @Test func aDeviceKeyIsNoPersonaAndAPersonaNoDeviceKey() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.persona(in: directory)
        #expect(throws: TLSError.self, "an RSA key is not a device key") {
            try TLSIdentity.loadOrCreate(
                keyPath: directory.file("localsend.key"), certificatePath: directory.file("localsend.crt"),
                commonName: "hexd")
        }
    }
}
