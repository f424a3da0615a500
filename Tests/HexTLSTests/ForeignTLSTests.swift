import Foundation
import Glibc
import HexHarness
import HexNet
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

/// hexd's TLS with the devices of another protocol, against Python's `ssl` (OpenSSL through a
/// stack hexd did not write): a client with a certificate, one without (as LocalSend apps before
/// 1.18 are), one on TLS 1.2; and hexd as the client of a server that asks for its certificate.
@Suite(.timeLimit(.minutes(2))) struct ForeignTLSTests {
    private static func persona(in directory: TemporaryDirectory) throws -> PersonaIdentity {
        try PersonaIdentity.loadOrCreate(
            keyPath: directory.file("persona.key"), certificatePath: directory.file("persona.crt"),
            commonName: "hexd", label: "LocalSend"
        ).0
    }

    /// Prints the SHA-256 of the server's certificate, then the server's answer to `ping`.
    private static let client = #"""
        import hashlib, socket, ssl, sys
        port, version, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if version == "1.2":
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        if cert != "-":
            ctx.load_cert_chain(cert, key)
        tls = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
        print(hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest(), tls.version())
        tls.sendall(b"ping\n")
        print(tls.makefile("r").readline().strip())
        """#

    private static func python(_ script: String, _ arguments: [String], in directory: TemporaryDirectory) async throws
        -> ProcessResult
    {
        let path = directory.file("script-\(UUID().uuidString.prefix(8)).py")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(script.utf8)))
        return try await PackageExecutable.run(
            try ExternalTool.require("python3"), [path] + arguments, timeout: .seconds(30))
    }

    @Test(arguments: [("1.3", true), ("1.3", false), ("1.2", false)])
    func aClientWithOrWithoutACertificateIsServed(version: String, withCertificate: Bool) async throws {
        let directory = try TemporaryDirectory()
        let context = try ForeignTLSContext(persona: try Self.persona(in: directory))
        let made = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=LocalSend User",
                "-keyout", directory.file("app.key"), "-out", directory.file("app.crt"), "-outform", "PEM",
            ])
        #expect(made.status == 0, "\(made.standardError)")
        _ = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            ["x509", "-in", directory.file("app.crt"), "-outform", "DER", "-out", directory.file("app.der")])
        let appFingerprint = Fingerprint(
            certificateDER: Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("app.der")))))

        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        async let served: Fingerprint? = {
            let connection = try await TLSConnection.handshake(
                over: try await listener.accept(), context: context, as: .server, timeout: .seconds(10))
            let lines = StreamConnection(stream: connection, maximumLineLength: 100)
            guard case .line(let line)? = try await lines.readLine(timeout: .seconds(10)) else { return nil }
            let seen = connection.peerCertificate?.description ?? "none"
            try await lines.writeLine(
                Array("\(String(decoding: line, as: UTF8.self)) \(seen)".utf8), timeout: .seconds(10))
            return connection.peerCertificate
        }()
        let certificate = withCertificate ? [directory.file("app.crt"), directory.file("app.key")] : ["-", "-"]
        let result = try await Self.python(Self.client, [String(listener.port), version] + certificate, in: directory)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let persona = context.persona.fingerprint.description
        #expect(lines.first == "\(persona) TLSv\(version)", "the client saw the persona: \(lines)")
        let proven = try await served
        if withCertificate {
            #expect(proven == appFingerprint && lines.last == "ping \(appFingerprint?.description ?? "?")")
        } else {
            #expect(proven == nil && lines.last == "ping none", "a client without a certificate is served")
        }
    }

    /// What KDE Connect reads from the other side's certificate: its common name (the device ID)
    /// and its public key (which the verification code covers), from a client `openssl` made.
    @Test func theCommonNameAndKeyOfTheOtherSideAreRead() async throws {
        let directory = try TemporaryDirectory()
        let context = try ForeignTLSContext(persona: try Self.persona(in: directory))
        let openssl = try ExternalTool.require("openssl")
        let made = try await PackageExecutable.run(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                "-subj", "/O=KDE/OU=KDE Connect/CN=_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_",
                "-keyout", directory.file("app.key"), "-out", directory.file("app.crt"),
            ])
        #expect(made.status == 0, "\(made.standardError)")
        let spki = try await PackageExecutable.run(
            openssl,
            ["pkey", "-in", directory.file("app.key"), "-pubout", "-outform", "DER", "-out", directory.file("k")])
        #expect(spki.status == 0, "\(spki.standardError)")
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("k"))))
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        async let seen: (String?, [UInt8]?) = {
            let connection = try await TLSConnection.handshake(
                over: try await listener.accept(), context: context, as: .server, timeout: .seconds(10))
            try await connection.write(Array("ok\n".utf8), timeout: .seconds(10))
            return (connection.peerCommonName, connection.peerPublicKeyDER)
        }()
        let result = try await Self.python(
            Self.client, [String(listener.port), "1.3", directory.file("app.crt"), directory.file("app.key")],
            in: directory)
        #expect(result.status == 0, "\(result.standardError)")
        let (name, der) = try await seen
        #expect(name == "_8bac2e5f_965d_4fa4_b4ac_247d1b8170e8_")
        #expect(der == key && key.count == 91)
    }

    /// A TLS 1.2 client that offers the session of its last connection (as Python's and Java's
    /// stacks do) gets a full handshake again, never a refusal: nothing is kept to resume.
    @Test func aClientOfferingAnOldSessionIsServedAfresh() async throws {
        let directory = try TemporaryDirectory()
        let context = try ForeignTLSContext(persona: try Self.persona(in: directory))
        let listener = try StreamListener.tcp(address: .loopback, port: 0)
        let server = Task {
            var resumed: [Bool] = []
            for _ in 0..<2 {
                let connection = try await TLSConnection.handshake(
                    over: try await listener.accept(), context: context, as: .server, timeout: .seconds(10))
                resumed.append(connection.isResumed)
                try await connection.write(Array("ok\n".utf8), timeout: .seconds(10))
            }
            return resumed
        }
        let client = #"""
            import socket, ssl, sys
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
            session = None
            for _ in range(2):
                connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                tls = ctx.wrap_socket(connection, session=session)
                print(tls.recv(16).decode().strip(), tls.session_reused)
                session = tls.session
                tls.close()
            """#
        let result = try await Self.python(client, [String(listener.port)], in: directory)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "ok False\nok False\n", "\(result.standardOutput)")
        #expect(try await server.value == [false, false])
    }

    /// A server that asks for the client's certificate (as LocalSend 1.18 does) gets the persona's.
    @Test func asAClientHexdShowsItsPersona() async throws {
        let directory = try TemporaryDirectory()
        let context = try ForeignTLSContext(persona: try Self.persona(in: directory))
        _ = try await PackageExecutable.run(
            try ExternalTool.require("openssl"),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=LocalSend User",
                "-keyout", directory.file("app.key"), "-out", directory.file("app.crt"),
            ])
        let server = #"""
            import hashlib, socket, ssl, sys
            cert, key, trusted = sys.argv[1], sys.argv[2], sys.argv[3]
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(trusted)
            listener = socket.create_server(("127.0.0.1", 0))
            print(listener.getsockname()[1], flush=True)
            connection, _ = listener.accept()
            connection.settimeout(10)
            tls = ctx.wrap_socket(connection, server_side=True)
            print(hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest(), flush=True)
            tls.sendall(tls.makefile("r").readline().upper().encode())
            """#
        let path = directory.file("server.py")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(server.utf8)))
        let outputPath = directory.file("server.out")
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(output >= 0)
        let process = try SpawnedProcess(
            try ExternalTool.require("python3"),
            [path, directory.file("app.crt"), directory.file("app.key"), directory.file("persona.crt")],
            standardOutput: output)
        close(output)
        defer { process.send(SIGKILL) }
        func printed() -> [String] {
            ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        var port: UInt16?
        try await waitUntil("the server prints its port", timeout: .seconds(10)) {
            port = printed().first.flatMap { UInt16($0) }
            return port != nil
        }
        let socket = try await StreamConnector.tcp(
            to: Endpoint(host: "127.0.0.1", port: try #require(port)), timeout: .seconds(5))
        let connection = try await TLSConnection.handshake(
            over: socket, context: context, as: .client, timeout: .seconds(10))
        let lines = StreamConnection(stream: connection, maximumLineLength: 100)
        try await lines.writeLine(Array("hello".utf8), timeout: .seconds(10))
        guard case .line(let answer)? = try await lines.readLine(timeout: .seconds(10)) else {
            Issue.record("no answer")
            return
        }
        #expect(String(decoding: answer, as: UTF8.self) == "HELLO")
        try await waitUntil("the server prints the client's certificate", timeout: .seconds(10)) { printed().count > 1 }
        #expect(printed().last == context.persona.fingerprint.description, "the server saw the persona")
        #expect(connection.peerCertificate != nil && connection.peerCertificate != context.persona.fingerprint)
    }
}
