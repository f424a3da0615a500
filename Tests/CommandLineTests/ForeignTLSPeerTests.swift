import Foundation
import HexControl
import HexKit
import HexTestSupport
import Testing

extension ProcessTests {
    /// A peer written with another TLS stack, from Protocol.md section 12 alone: Python's `ssl`
    /// module, with a certificate made by the openssl command. It sends to hexd and takes a send
    /// from hexd, both over TLS 1.3 with both keys checked by their fingerprints.
    @Suite struct ForeignTLSPeerTests {
        static let peer = #"""
            import hashlib, json, socket, ssl, sys

            mode, cert, key, host, port, expected = sys.argv[1:7]

            def context(side):
                ctx = ssl.SSLContext(side)
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
                ctx.load_cert_chain(cert, key)
                if side == ssl.PROTOCOL_TLS_CLIENT:
                    ctx.check_hostname = False
                    ctx.verify_mode = ssl.CERT_NONE  # trust is the fingerprint, checked below
                else:
                    # Python verifies a client certificate it asks for: hexd's own, self-signed, is its anchor.
                    ctx.verify_mode = ssl.CERT_REQUIRED
                    ctx.load_verify_locations(sys.argv[7])
                return ctx

            def check(tls):
                proved = hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()
                if proved != expected:
                    sys.exit("the other side proved " + proved + ", not " + expected)

            if mode == "send":
                tls = context(ssl.PROTOCOL_TLS_CLIENT).wrap_socket(socket.create_connection((host, int(port))))
                check(tls)
                envelope = {"versionID": "2.0.0", "operationType": "Store", "jmObjectType": "Hex", "messageID": "PY-1",
                            "jmObject": {"senderUUID": "0A0B0C0D-0E0F-4000-8000-000000000001", "senderName": "Python",
                                         "hexDescription": "from Python", "hexColor": "#123456",
                                         "links": [{"url": "https://python.example/doc", "linkDescription": "doc", "service": "Unknown"}]}}
                tls.sendall(json.dumps(envelope).encode() + b"\n")
                print(tls.makefile("r").readline().strip())
            else:
                listener = socket.create_server((host, 0))
                with open(sys.argv[8], "w") as announced:
                    announced.write(str(listener.getsockname()[1]))
                connection, _ = listener.accept()
                tls = context(ssl.PROTOCOL_TLS_SERVER).wrap_socket(connection, server_side=True)
                check(tls)
                envelope = json.loads(tls.makefile("r").readline())
                ack = {"versionID": "2.0.0", "operationType": "Ack", "messageID": envelope["messageID"], "status": "stored",
                       "message": "stored by Python: " + envelope["jmObject"]["links"][0]["url"]}
                tls.sendall(json.dumps(ack).encode() + b"\n")
                tls.close()
            """#

        /// The Python peer's key and certificate, made by the openssl command, and its fingerprint.
        private func pythonIdentity(in directory: TemporaryDirectory) async throws -> String {
            let made = try await PackageExecutable.run("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1", "-subj", "/CN=python peer",
                "-keyout", directory.file("py.key"), "-out", directory.file("py.crt"),
            ])
            #expect(made.status == 0, "\(made.standardError)")
            _ = try await PackageExecutable.run("/usr/bin/openssl", ["x509", "-in", directory.file("py.crt"), "-outform", "DER", "-out", directory.file("py.der")])
            let digest = try await PackageExecutable.run("/usr/bin/openssl", ["dgst", "-sha256", "-r", directory.file("py.der")])
            return String(digest.standardOutput.prefix(64))
        }

        @Test func aPythonPeerAndHexdExchangeOverTLSBothWays() async throws {
            let directory = try TemporaryDirectory()
            #expect(FileManager.default.createFile(atPath: directory.file("peer.py"), contents: Data(Self.peer.utf8)))
            let pythonKey = try await pythonIdentity(in: directory)
            let hexd = try await DaemonProcess(name: "Hexd", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let status = try await hexd.hexctlJSON(StatusReport.self, ["status"])
            let hexdKey = try #require(status.fingerprint)
            let python = ["python3", directory.file("peer.py")]
            let files = [directory.file("py.crt"), directory.file("py.key"), "127.0.0.1"]

            // Python sends; hexd stores it, pinned to Python's key.
            let sent = try await PackageExecutable.run("/usr/bin/env", python + ["send"] + files + [String(status.tcpPort), hexdKey])
            #expect(sent.status == 0, "\(sent.standardError)")
            let ack = try Envelope.decode(from: Array(sent.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
            #expect(ack.status == .stored && ack.messageID == "PY-1", "\(sent.standardOutput)")
            let stored = try #require(try await hexd.newestInboxHex())
            #expect(stored.senderName == "Python" && stored.senderTrust == .pinned && stored.links.map(\.url) == ["https://python.example/doc"])

            // hexd sends to Python, which checks hexd's key; the report names Python's.
            let portFile = directory.file("port")
            let arguments = python + ["receive"] + files + ["0", hexdKey, hexd.dataDirectory + "/identity.crt", portFile]
            let listening = Task.detached { try await PackageExecutable.run("/usr/bin/env", arguments, timeout: .seconds(30)) }
            var pythonPort = ""
            try await waitUntil("Python listens", timeout: .seconds(10)) {
                pythonPort = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
                return !pythonPort.isEmpty
            }
            let report = try await hexd.hexctlJSON(SendReport.self, ["send", "--to", "127.0.0.1:" + pythonPort, "https://hexd.example/for-python"])
            #expect(report.status == .stored && report.peerKey == pythonKey && report.message == "stored by Python: https://hexd.example/for-python")
            let received = try await listening.value
            #expect(received.status == 0, "Python checked hexd's key: \(received.standardError)")
        }
    }
}
