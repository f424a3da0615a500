import Foundation
import HexNet
import HexTestSupport
import HexTLS
import Testing

import Glibc

/// Device identities and TLS 1.3 connections over real loopback sockets.
@Suite struct TLSTests {
    private static func identity(in directory: TemporaryDirectory, _ name: String = "device") throws -> (TLSIdentity, created: Bool) {
        try TLSIdentity.loadOrCreate(keyPath: directory.file(name + ".key"), certificatePath: directory.file(name + ".crt"), commonName: "hexd " + name)
    }

    @Test func anIdentityIsMadeOnceInPrivateFilesAndKept() throws {
        let directory = try TemporaryDirectory()
        let (made, created) = try Self.identity(in: directory)
        #expect(created)
        for file in ["device.key", "device.crt"] {
            var status = stat()
            #expect(stat(directory.file(file), &status) == 0 && status.st_mode & 0o777 == 0o600, "\(file) is 0600")
        }
        let (reloaded, createdAgain) = try Self.identity(in: directory)
        #expect(!createdAgain && reloaded.fingerprint == made.fingerprint, "a restart keeps the identity")
        #expect(made.fingerprint != (try Self.identity(in: directory, "other").0.fingerprint), "each new identity is its own")
    }

    /// The fingerprint is the SHA-256 of the certificate's DER form, as any TLS stack computes it
    /// from the certificate it is shown: checked against the openssl command.
    @Test func theFingerprintIsTheHashOfTheCertificate() async throws {
        let directory = try TemporaryDirectory()
        let (identity, _) = try Self.identity(in: directory)
        let der = try await PackageExecutable.run("/usr/bin/openssl", ["x509", "-in", directory.file("device.crt"), "-outform", "DER", "-out", directory.file("device.der")])
        #expect(der.status == 0, "\(der.standardError)")
        let digest = try await PackageExecutable.run("/usr/bin/openssl", ["dgst", "-sha256", "-r", directory.file("device.der")])
        #expect(digest.standardOutput.hasPrefix(identity.fingerprint.description + " "), "\(digest.standardOutput)")
        let text = try await PackageExecutable.run("/usr/bin/openssl", ["x509", "-in", directory.file("device.crt"), "-noout", "-text"])
        #expect(text.standardOutput.contains("ED25519") && text.standardOutput.contains("CN = hexd device"))
    }

    /// A certificate without its key, a key with another's certificate, and garbage are refused;
    /// a key whose certificate was never written (a first start cut short) gets one, and stays
    /// the same device.
    @Test func halfAnIdentityIsCompletedOrRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.identity(in: directory, "a")
        let b = try Self.identity(in: directory, "b").0
        #expect(rename(directory.file("b.crt"), directory.file("mixed.crt")) == 0 && rename(directory.file("a.key"), directory.file("mixed.key")) == 0)
        #expect(throws: TLSError.self, "a key with another's certificate") { try Self.identity(in: directory, "mixed") }
        #expect(throws: TLSError.self, "a certificate without its key") { try Self.identity(in: directory, "a") }
        let (completed, made) = try Self.identity(in: directory, "b")
        #expect(made && completed.deviceID == b.deviceID, "a key without its certificate is completed, keeping its ID")
        #expect(try Self.identity(in: directory, "b").0.fingerprint == completed.fingerprint, "and kept")
        #expect(unlink(directory.file("mixed.crt")) == 0)
        #expect(FileManager.default.createFile(atPath: directory.file("mixed.crt"), contents: Data("not PEM".utf8)))
        #expect(throws: TLSError.self, "garbage") { try Self.identity(in: directory, "mixed") }
    }

    /// A client and a server each prove their key; lines, a large one included, cross both ways.
    @Test func bothSidesProveTheirKeysAndLinesCross() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory, "server").0)
        let client = try TLSContext(identity: try Self.identity(in: directory, "client").0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let large = [UInt8](repeating: UInt8(ascii: "x"), count: 3_000_000)
        async let accepted: Fingerprint = {
            let stream = try await TLSStream.handshake(over: try await listener.accept(), context: server, as: .server, timeout: .seconds(10))
            let connection = StreamConnection(stream: stream, maximumLineLength: 4_000_000)
            guard case .line(let first)? = try await connection.readLine(timeout: .seconds(10)),
                  case .line(let second)? = try await connection.readLine(timeout: .seconds(10)) else { throw TLSError("read", reason: "no lines") }
            try await connection.writeLine(Array("got \(first.count) and \(second.count)".utf8), timeout: .seconds(10))
            return stream.peer
        }()
        let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        let stream = try await TLSStream.handshake(over: socket, context: client, as: .client, timeout: .seconds(10))
        #expect(stream.peer == server.identity.fingerprint)
        let connection = StreamConnection(stream: stream, maximumLineLength: 1_000)
        try await connection.writeLine(Array("hello".utf8), timeout: .seconds(10))
        try await connection.writeLine(large, timeout: .seconds(10))
        guard case .line(let answer)? = try await connection.readLine(timeout: .seconds(10)) else { throw TLSError("read", reason: "no answer") }
        #expect(String(decoding: answer, as: UTF8.self) == "got 5 and 3000000")
        #expect(try await accepted == client.identity.fingerprint)
    }

    /// What is not TLS fails the handshake clearly; silence fails it at the deadline.
    @Test func plaintextGarbageAndSilenceFailTheHandshake() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory).0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        for (bytes, expectTimeout) in [(Array(#"{"versionID":"1.0","operationType":"Store"}"#.utf8) + [10], false), ([0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 100), false), ([], true)] {
            let socket = try await StreamConnector.tcp(to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
            if !bytes.isEmpty { try await socket.write(bytes, timeout: .seconds(5)) }
            let accepted = try await listener.accept()
            await #expect {
                try await TLSStream.handshake(over: accepted, context: server, as: .server, timeout: .milliseconds(expectTimeout ? 300 : 5_000))
            } throws: { error in
                expectTimeout ? (error as? SocketError)?.isTimeout == true : error is TLSError
            }
            withExtendedLifetime(socket) {}
        }
    }
}
