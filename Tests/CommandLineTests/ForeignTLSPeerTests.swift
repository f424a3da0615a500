import Foundation
import HexControl
import HexHarness
import HexKit
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// A peer written with other tools, from Protocol.md sections 9 and 12 alone: Python's `ssl`,
    /// `hashlib` and the `cryptography` package, with a key made by the openssl command. It
    /// derives the same device IDs as hexd, verifies hexd's signed beacons, signs its own (which
    /// hexd takes), and exchanges hexes with hexd both ways over TLS 1.3, both keys checked.
    @Suite struct ForeignTLSPeerTests {
        static let peer = #"""
            import hashlib, json, math, socket, ssl, sys, time, uuid
            from cryptography import x509
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

            mode, cert, key, host, port, expected = sys.argv[1:7]

            def device_id(spki):
                # Section 12.1: the first 16 bytes of SHA-256 over the SubjectPublicKeyInfo, version 8.
                b = bytearray(hashlib.sha256(spki).digest()[:16])
                b[6] = (b[6] & 0x0F) | 0x80
                b[8] = (b[8] & 0x3F) | 0x80
                h = b.hex().upper()
                return "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])

            def spki_of(der):
                key = x509.load_der_x509_certificate(der).public_key()
                return key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)

            own_der = ssl.PEM_cert_to_DER_cert(open(cert).read())
            own_spki = spki_of(own_der)
            own_id = device_id(own_spki)

            def signed_message(b):
                # Section 9: every field as its UTF-8 bytes after their count in two bytes, big-endian.
                fields = ["hexd-beacon-signature/1", b["kind"], b["peer"], b["instance"], b["name"], b["versionID"]]
                fields += [str(b["port"]), str(math.floor(b["interval"] * 1000 + 0.5)), str(len(b["capabilities"]))]
                fields += b["capabilities"]
                fields += [b.get("fingerprint") or "", b["key"], str(b["boot"]), str(b["seq"])]
                out = b""
                for field in fields:
                    data = field.encode()
                    out += len(data).to_bytes(2, "big") + data
                return out

            def context(side):
                ctx = ssl.SSLContext(side)
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
                ctx.load_cert_chain(cert, key)
                if side == ssl.PROTOCOL_TLS_CLIENT:
                    ctx.check_hostname = False
                    ctx.verify_mode = ssl.CERT_NONE  # trust is the key, checked below
                else:
                    # Python verifies a client certificate it asks for: hexd's own, self-signed, is its anchor.
                    ctx.verify_mode = ssl.CERT_REQUIRED
                    ctx.load_verify_locations(sys.argv[7])
                return ctx

            def check(tls):
                # The other side's key must derive the ID it goes by.
                proved = device_id(spki_of(tls.getpeercert(binary_form=True)))
                if proved != expected:
                    sys.exit("the other side's key derives " + proved + ", not " + expected)

            if mode == "id":
                print(own_id)
            elif mode == "beacon":
                # Hears hexd's beacons on the discovery port and verifies one of the peer `expected`.
                listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                listener.bind(("", int(port)))
                listener.settimeout(10)
                while True:
                    beacon = json.loads(listener.recv(2048))
                    if beacon.get("peer") != expected or "sig" not in beacon:
                        continue
                    spki = bytes.fromhex(beacon["key"])
                    if device_id(spki) != beacon["peer"]:
                        sys.exit("the beacon's key derives " + device_id(spki))
                    public_key = serialization.load_der_public_key(spki)
                    public_key.verify(bytes.fromhex(beacon["sig"]), signed_message(beacon))
                    tampered = dict(beacon, name=beacon["name"] + "!")
                    try:
                        public_key.verify(bytes.fromhex(beacon["sig"]), signed_message(tampered))
                        sys.exit("a tampered beacon verified")
                    except Exception:
                        pass
                    print("verified", beacon["peer"], beacon["boot"], beacon["seq"])
                    break
            elif mode == "send":
                tls = context(ssl.PROTOCOL_TLS_CLIENT).wrap_socket(socket.create_connection((host, int(port))))
                check(tls)
                envelope = {"versionID": "2.0.0", "operationType": "Store", "jmObjectType": "Hex", "messageID": "PY-1",
                            "jmObject": {"senderUUID": own_id, "senderName": "Python",
                                         "hexDescription": "from Python", "hexColor": "#123456",
                                         "links": [{"url": "https://python.example/doc"}]}}
                tls.sendall(json.dumps(envelope).encode() + b"\n")
                print(tls.makefile("r").readline().strip())
            else:
                # Announces itself with signed beacons, then takes one hex over TLS.
                listener = socket.create_server((host, 0))
                private = serialization.load_pem_private_key(open(key, "rb").read(), None)
                beacon = {"format": "hexd-beacon/1", "kind": "announce", "peer": own_id,
                          "instance": str(uuid.uuid4()).upper(), "name": "Python", "versionID": "2.0.0",
                          "port": listener.getsockname()[1], "interval": 2.0,
                          "capabilities": ["ack", "tls"], "fingerprint": hashlib.sha256(own_der).hexdigest(),
                          "key": own_spki.hex(), "boot": int(time.time()), "seq": 0}
                announcer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                announcer.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
                listener.settimeout(0.3)
                for _ in range(60):
                    beacon["seq"] += 1
                    beacon["sig"] = private.sign(signed_message(beacon)).hex()
                    announcer.sendto(json.dumps(beacon).encode(), ("127.255.255.255", int(sys.argv[8])))
                    try:
                        connection, _ = listener.accept()
                        break
                    except socket.timeout:
                        continue
                else:
                    sys.exit("hexd never connected")
                connection.settimeout(10)
                tls = context(ssl.PROTOCOL_TLS_SERVER).wrap_socket(connection, server_side=True)
                check(tls)
                envelope = json.loads(tls.makefile("r").readline())
                ack = {"versionID": "2.0.0", "operationType": "Ack", "messageID": envelope["messageID"], \#
            "status": "stored",
                       "message": "stored by Python: " + envelope["jmObject"]["links"][0]["url"]}
                tls.sendall(json.dumps(ack).encode() + b"\n")
                tls.close()
            """#

        /// The Python peer's key and certificate, made by the openssl command, and its fingerprint.
        private func pythonIdentity(in directory: TemporaryDirectory) async throws -> String {
            let made = try await PackageExecutable.run(
                try ExternalTool.require("openssl"),
                [
                    "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1", "-subj", "/CN=python peer",
                    "-keyout", directory.file("py.key"), "-out", directory.file("py.crt"),
                ])
            #expect(made.status == 0, "\(made.standardError)")
            _ = try await PackageExecutable.run(
                try ExternalTool.require("openssl"),
                ["x509", "-in", directory.file("py.crt"), "-outform", "DER", "-out", directory.file("py.der")])
            let digest = try await PackageExecutable.run(
                try ExternalTool.require("openssl"), ["dgst", "-sha256", "-r", directory.file("py.der")])
            return String(digest.standardOutput.prefix(64))
        }

        @Test func aPythonPeerAndHexdAgreeOnIDsSignaturesAndExchangeOverTLS() async throws {
            let probe = try await PackageExecutable.run("/usr/bin/env", ["python3", "-c", "import cryptography"])
            try ExternalTool.require(pythonModule: "cryptography", found: probe.status == 0)
            let directory = try TemporaryDirectory()
            #expect(FileManager.default.createFile(atPath: directory.file("peer.py"), contents: Data(Self.peer.utf8)))
            let pythonKey = try await pythonIdentity(in: directory)
            let discoveryPort = try DaemonProcess.freeDiscoveryPort()
            let hexd = try await DaemonProcess(name: "Hexd", discoveryPort: discoveryPort)
            let status = try await hexd.hexctlJSON(StatusReport.self, ["status"])
            let python = ["python3", directory.file("peer.py")]
            let files = [directory.file("py.crt"), directory.file("py.key"), "127.0.0.1"]
            let pythonID = try await PackageExecutable.run("/usr/bin/env", python + ["id"] + files + ["0", "-"])
                .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(pythonID.isKeyDerivedID, "\(pythonID)")

            // Python verifies hexd's beacon: the key derives hexd's ID, the signature holds.
            let heard = try await PackageExecutable.run(
                "/usr/bin/env",
                python + ["beacon"] + files + [String(discoveryPort), status.peerUUID],
                timeout: .seconds(20))
            #expect(
                heard.status == 0 && heard.standardOutput.hasPrefix("verified \(status.peerUUID) "),
                "\(heard.standardError)")

            // Python sends, as the ID its key derives; hexd checks it and meets the key.
            let sent = try await PackageExecutable.run(
                "/usr/bin/env",
                python + ["send"] + files + [String(status.tcpPort), status.peerUUID])
            #expect(sent.status == 0, "\(sent.standardError)")
            let ack = try Envelope.decode(
                from: Array(sent.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
            #expect(ack.status == .stored && ack.messageID == "PY-1", "\(sent.standardOutput)")
            let stored = try #require(try await hexd.newestInboxHex())
            #expect(
                stored.senderUUID == pythonID && stored.senderTrust == .new
                    && stored.links.map(\.url) == ["https://python.example/doc"])

            // Python announces itself with signed beacons; hexd lists it by its ID and sends to
            // it by name, over TLS; Python checks hexd's key derives hexd's ID.
            let arguments =
                python + ["receive"] + files + [
                    "0", status.peerUUID, hexd.dataDirectory + "/identity.crt",
                    String(discoveryPort),
                ]
            let listening = Task.detached {
                try await PackageExecutable.run("/usr/bin/env", arguments, timeout: .seconds(30))
            }
            try await waitUntil("hexd lists Python", timeout: .seconds(15)) {
                let peers = try await hexd.hexctlJSONLines(PeerInfo.self, ["peers"])
                return peers.contains { $0.uuid == pythonID && $0.fingerprint == pythonKey }
            }
            let report = try await hexd.hexctlJSON(
                SendReport.self,
                [
                    "send", "--to", "Python",
                    "https://hexd.example/for-python",
                ])
            #expect(
                report.status == .stored && report.peerKey == pythonKey
                    && report.message == "stored by Python: https://hexd.example/for-python")
            let received = try await listening.value
            #expect(received.status == 0, "Python checked hexd's key: \(received.standardError)")
        }
        /// A client whose certificate is 95 KB (1,300 names) is refused in the handshake, however
        /// many times it tries, and none of its Alerts is answered; one with an ordinary
        /// certificate, from the same script, is answered.
        @Test func aCertificateChainOver16KiBIsRefusedInTheHandshake() async throws {
            let probe = try await PackageExecutable.run("/usr/bin/env", ["python3", "-c", "import ssl"])
            try ExternalTool.require(pythonModule: "ssl", found: probe.status == 0)
            let directory = try TemporaryDirectory()
            let names = (1...1_300).map { "DNS.\($0) = \(String(repeating: "a", count: 60)).\($0).example" }
                .joined(separator: "\n")
            let config =
                "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n[dn]\nCN = big\n[ext]\n"
                + "subjectAltName = @alt\n[alt]\n" + names + "\n"
            #expect(FileManager.default.createFile(atPath: directory.file("big.cnf"), contents: Data(config.utf8)))
            for (name, extra) in [("big", ["-config", directory.file("big.cnf")]), ("small", ["-subj", "/CN=small"])] {
                let made = try await PackageExecutable.run(
                    try ExternalTool.require("openssl"),
                    [
                        "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1",
                        "-keyout", directory.file(name + ".key"), "-out", directory.file(name + ".crt"),
                    ] + extra)
                #expect(made.status == 0, "\(made.standardError)")
            }
            let client = #"""
                import json, socket, ssl, sys
                cert, key, port, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                ctx.load_cert_chain(cert, key)
                served = 0
                for attempt in range(attempts):
                    try:
                        tls = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5))
                        envelope = {"versionID": "2.0.0", "operationType": "Alert", "message": "hi",
                                    "messageID": str(attempt)}
                        tls.sendall(json.dumps(envelope).encode() + b"\n")
                        if tls.makefile("r").readline().strip():
                            served += 1
                        tls.close()
                    except (OSError, ssl.SSLError):
                        pass
                print(served)
                """#
            #expect(FileManager.default.createFile(atPath: directory.file("client.py"), contents: Data(client.utf8)))
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("big.crt"))
            let bigSize = attributes[.size] as? Int ?? 0
            #expect(bigSize > 95_000 * 4 / 3, "a PEM of over 95 KB of DER: \(bigSize) bytes")

            let hexd = try await DaemonProcess(name: "Hexd", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let port = String(try await hexd.hexctlJSON(StatusReport.self, ["status"]).tcpPort)
            let run = { (name: String, attempts: String) in
                let arguments = [
                    "python3", directory.file("client.py"), directory.file(name + ".crt"),
                    directory.file(name + ".key"), port, attempts,
                ]
                return try await PackageExecutable.run("/usr/bin/env", arguments, timeout: .seconds(60))
            }
            let big = try await run("big", "50")
            #expect(
                big.status == 0 && big.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0",
                "no big certificate served: \(big.standardOutput) \(big.standardError)")
            let small = try await run("small", "1")
            #expect(
                small.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "1",
                "\(small.standardError)")
            #expect(
                hexd.log.contains("excessive message size") || hexd.log.contains("message too long")
                    || hexd.log.contains("TLS handshake"), "the refusal is logged")
        }
    }
}
