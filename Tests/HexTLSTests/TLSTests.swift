import Foundation
import Glibc
import HexHarness
import HexNet
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

/// Device identities and TLS 1.3 connections over real loopback sockets.
@Suite(.timeLimit(.minutes(5))) struct TLSTests {
    private static func identity(in directory: TemporaryDirectory, _ name: String = "device") throws -> (
        TLSIdentity, created: Bool
    ) {
        try TLSIdentity.loadOrCreate(
            keyPath: directory.file(name + ".key"), certificatePath: directory.file(name + ".crt"),
            commonName: "hexd " + name)
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
        #expect(
            made.fingerprint != (try Self.identity(in: directory, "other").0.fingerprint),
            "each new identity is its own")
    }

    /// The fingerprint is the SHA-256 of the certificate's DER form, as any TLS stack computes it
    /// from the certificate it is shown: checked against the openssl command.
    @Test func theFingerprintIsTheHashOfTheCertificate() async throws {
        let directory = try TemporaryDirectory()
        let (identity, _) = try Self.identity(in: directory)
        let der = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            ["x509", "-in", directory.file("device.crt"), "-outform", "DER", "-out", directory.file("device.der")])
        #expect(der.status == 0, "\(der.standardError)")
        let digest = try await PackageExecutable.run(
            try ExternalTool.require("openssl"), ["dgst", "-sha256", "-r", directory.file("device.der")])
        #expect(digest.standardOutput.hasPrefix(identity.fingerprint.description + " "), "\(digest.standardOutput)")
        let text = try await PackageExecutable.run(
            try ExternalTool.require("openssl"), ["x509", "-in", directory.file("device.crt"), "-noout", "-text"])
        #expect(text.standardOutput.contains("ED25519") && text.standardOutput.contains("CN = hexd device"))
    }

    /// A certificate without its key, a key with another's certificate, and garbage are refused;
    /// a key whose certificate was never written (a first start cut short) gets one, and stays
    /// the same device.
    @Test func halfAnIdentityIsCompletedOrRefused() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.identity(in: directory, "a")
        let b = try Self.identity(in: directory, "b").0
        #expect(
            rename(directory.file("b.crt"), directory.file("mixed.crt")) == 0
                && rename(directory.file("a.key"), directory.file("mixed.key")) == 0)
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
            let stream = try await TLSStream.handshake(
                over: try await listener.accept(), context: server, as: .server, timeout: .seconds(10))
            let connection = StreamConnection(stream: stream, maximumLineLength: 4_000_000)
            guard case .line(let first)? = try await connection.readLine(timeout: .seconds(10)),
                case .line(let second)? = try await connection.readLine(timeout: .seconds(10))
            else { throw TLSError("read", reason: "no lines") }
            try await connection.writeLine(Array("got \(first.count) and \(second.count)".utf8), timeout: .seconds(10))
            return stream.peer
        }()
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
        let stream = try await TLSStream.handshake(over: socket, context: client, as: .client, timeout: .seconds(10))
        #expect(stream.peer == server.identity.fingerprint)
        let connection = StreamConnection(stream: stream, maximumLineLength: 1_000)
        try await connection.writeLine(Array("hello".utf8), timeout: .seconds(10))
        try await connection.writeLine(large, timeout: .seconds(10))
        guard case .line(let answer)? = try await connection.readLine(timeout: .seconds(10)) else {
            throw TLSError("read", reason: "no answer")
        }
        #expect(String(decoding: answer, as: UTF8.self) == "got 5 and 3000000")
        #expect(try await accepted == client.identity.fingerprint)
    }

    /// One exchange over a new connection to `listener`: the client sends a line, the server
    /// answers it, and the client reads the answer (which is when a ticket arrives). Returns both
    /// ends' streams.
    private static func exchange(
        client: TLSContext, server: TLSContext, listener: StreamListener, expecting peerID: UUID?,
        keepingSession: Bool = true
    ) async throws -> (client: TLSStream, server: TLSStream) {
        async let accepted: TLSStream = {
            let stream = try await TLSStream.handshake(
                over: try await listener.accept(), context: server, as: .server, keepingSession: keepingSession,
                timeout: .seconds(10))
            let connection = StreamConnection(stream: stream, maximumLineLength: 1_000)
            guard case .line? = try await connection.readLine(timeout: .seconds(10)) else {
                throw TLSError("read", reason: "no line")
            }
            try await connection.writeLine(Array("ack".utf8), timeout: .seconds(10))
            return stream
        }()
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: listener.port),
            timeout: .seconds(5))
        let stream = try await TLSStream.handshake(
            over: socket, context: client, as: .client, expecting: peerID,
            timeout: .seconds(10))
        let connection = StreamConnection(stream: stream, maximumLineLength: 1_000)
        try await connection.writeLine(Array("store".utf8), timeout: .seconds(10))
        guard case .line(let answer)? = try await connection.readLine(timeout: .seconds(10)) else {
            throw TLSError("read", reason: "no answer")
        }
        #expect(answer == Array("ack".utf8))
        return (stream, try await accepted)
    }

    /// A client that expects a peer's ID resumes its next connection to it: both sides still know
    /// each other's key, the ticket is used once, and without an expected ID nothing resumes.
    @Test func aSecondConnectionToTheSamePeerResumesAndProvesTheSameKeys() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory, "server").0)
        let client = try TLSContext(identity: try Self.identity(in: directory, "client").0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let serverID = server.identity.deviceID
        var resumed: [Bool] = []
        for _ in 0..<3 {
            let (clientSide, serverSide) = try await Self.exchange(
                client: client, server: server, listener: listener,
                expecting: serverID)
            #expect(clientSide.isResumed == serverSide.isResumed)
            #expect(clientSide.peer == server.identity.fingerprint && clientSide.peerKey.deviceID == serverID)
            #expect(
                serverSide.peer == client.identity.fingerprint
                    && serverSide.peerKey.deviceID == client.identity.deviceID)
            resumed.append(clientSide.isResumed)
        }
        #expect(resumed == [false, true, true], "the first is a full handshake, each next one resumes")
        let unnamed = try await Self.exchange(client: client, server: server, listener: listener, expecting: nil)
        #expect(!unnamed.client.isResumed, "a client that names no peer resumes nothing")
        let again = try await Self.exchange(client: client, server: server, listener: listener, expecting: serverID)
        #expect(again.client.isResumed, "and leaves the kept ticket for the next connection that names it")
    }

    /// A server that keeps no session for a client (hexd's, for a stranger) gives it a ticket that
    /// carries the session itself: the client still resumes, and the server's cache stays empty.
    @Test func aSessionNotKeptByTheServerStillResumesFromItsTicket() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory, "server").0)
        let client = try TLSContext(identity: try Self.identity(in: directory, "client").0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let serverID = server.identity.deviceID
        var resumed: [Bool] = []
        for _ in 0..<3 {
            let (clientSide, serverSide) = try await Self.exchange(
                client: client, server: server, listener: listener, expecting: serverID, keepingSession: false)
            #expect(clientSide.isResumed == serverSide.isResumed)
            #expect(serverSide.peerKey.deviceID == client.identity.deviceID)
            resumed.append(clientSide.isResumed)
        }
        #expect(resumed == [false, true, true])
        #expect(server.keptSessions == 0, "the server kept no session")
        _ = try await Self.exchange(client: client, server: server, listener: listener, expecting: serverID)
        #expect(server.keptSessions == 1, "a session it keeps is counted")
    }

    /// A ticket is only offered to a connection expecting the ID it was got from, and another
    /// server cannot take one for its own: a server with another key (here at the same address)
    /// gets a full handshake and proves its own key, whatever the client expected.
    @Test func aTicketResumesOnlyWithTheServerThatGaveIt() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory, "server").0)
        let impostor = try TLSContext(identity: try Self.identity(in: directory, "impostor").0)
        let client = try TLSContext(identity: try Self.identity(in: directory, "client").0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let serverID = server.identity.deviceID
        _ = try await Self.exchange(client: client, server: server, listener: listener, expecting: serverID)
        let other = try await Self.exchange(client: client, server: impostor, listener: listener, expecting: serverID)
        #expect(!other.client.isResumed && !other.server.isResumed)
        #expect(other.client.peerKey.deviceID == impostor.identity.deviceID, "the impostor proves its own key")
        let afterIt = try await Self.exchange(client: client, server: server, listener: listener, expecting: serverID)
        #expect(!afterIt.client.isResumed, "the ticket was offered once, and the impostor's is not kept for the ID")
        let next = try await Self.exchange(client: client, server: server, listener: listener, expecting: serverID)
        #expect(next.client.isResumed)
        // A restarted server (a new context, the same key) cannot open the tickets of the old one.
        let restarted = try TLSContext(identity: try Self.identity(in: directory, "server").0)
        let fresh = try await Self.exchange(client: client, server: restarted, listener: listener, expecting: serverID)
        #expect(!fresh.client.isResumed && fresh.client.peerKey.deviceID == serverID)
    }

    /// What is not TLS fails the handshake clearly; silence fails it at the deadline.
    @Test func plaintextGarbageAndSilenceFailTheHandshake() async throws {
        let directory = try TemporaryDirectory()
        let server = try TLSContext(identity: try Self.identity(in: directory).0)
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        for (bytes, expectTimeout) in [
            (Array(#"{"versionID":"1.0","operationType":"Store"}"#.utf8) + [10], false),
            ([0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 100), false), ([], true),
        ] {
            let socket = try await StreamConnector.tcp(
                to: Endpoint(host: "127.0.0.1", port: listener.port), timeout: .seconds(5))
            if !bytes.isEmpty { try await socket.write(bytes, timeout: .seconds(5)) }
            let accepted = try await listener.accept()
            await #expect {
                try await TLSStream.handshake(
                    over: accepted, context: server, as: .server, timeout: .milliseconds(expectTimeout ? 300 : 5_000))
            } throws: { error in
                expectTimeout ? (error as? SocketError)?.isTimeout == true : error is TLSError
            }
            withExtendedLifetime(socket) {}
        }
    }
}
