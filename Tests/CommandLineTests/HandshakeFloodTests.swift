import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// A storm of bare ClientHellos against a real daemon (Protocol.md, section 11): strangers
    /// past their handshake budget are cut before any cryptography, while a known peer's fresh
    /// connections and an honest stranger's are served. (How fast: `hexbench identity`.)
    @Suite struct HandshakeFloodTests {
        @Test func aFloodIsCutBeforeItsHandshakesWhileAKnownPeerAndAnHonestStrangerAreServed() async throws {
            let budget = 20
            let discovery = try DaemonProcess.freeDiscoveryPort()
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: discovery,
                extraArguments: ["--stranger-handshakes", String(budget), "--log-level", "info"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            // Target delivers to a peer at 127.0.0.1 over TLS: that address is a known peer's from
            // now on, and the test's "friend" connects from it.
            let peer = try await DaemonProcess(name: "Peer", discoveryPort: discovery)
            let peerPort = try await peer.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            let sent = try await daemon.hexctl(["send", "--to", "127.0.0.1:\(peerPort)", "https://example.com/hi"])
            #expect(sent.status == 0, "\(sent.standardError)")
            let directory = try TemporaryDirectory()
            let friend = try peerIdentity("friend", in: directory)
            try await expectStored(store("before", from: friend), port: port, as: friend)
            // An attacker's key pinned on first use (--accept anyone) makes no address known: its
            // next connections, and the storm's from the same address, are a stranger's.
            let attacker = try peerIdentity("attacker", in: directory)
            for index in 0..<2 {
                try await expectStored(
                    store("pinned \(index)", from: attacker), port: port, as: attacker, from: IPAddress("127.21.0.7"))
            }
            let before = try #require(try await daemon.hexctlJSON(StatusReport.self, ["status"]).connections)

            // 1,600 bare ClientHellos, 400 a second, from 192 addresses of 127.21.0.0/24.
            let hello = try await ClientHelloStorm.hello(as: attacker)
            let stormStart = ContinuousClock.now
            let storm = Task {
                await ClientHelloStorm.run(
                    hello, count: 1_600, perSecond: 400, to: port, from: loopbackHosts(192, network: 21))
            }
            try await Task.sleep(for: .seconds(1))
            for index in 0..<10 {
                try await expectStored(store("during \(index)", from: friend), port: port, as: friend)
            }
            // A stranger new to the daemon, in the flooding subnet, gets through on the newcomers' reserve
            // once the storm's addresses have made their first 3 connections each (1.5 s at 400 a second).
            try await Task.sleep(until: stormStart + .seconds(2.5), clock: .continuous)
            let stranger = try peerIdentity("stranger", in: directory)
            try await expectStored(
                store("a stranger", from: stranger), port: port, as: stranger, from: IPAddress("127.21.0.250"))
            let outcome = await storm.value
            let after = try #require(try await daemon.hexctlJSON(StatusReport.self, ["status"]).connections)

            // The storm lasted about 4 s: strangers get the total's burst (4 s of it) and its rate,
            // and the newcomers' reserve, a tenth of it, the same; the rest is cut.
            let bound = Int(Double(budget) * 1.1 * (4 + 6))
            #expect(outcome.answered <= bound && outcome.cutBeforeAnswer >= 1_600 - bound, "\(outcome)")
            let refused = (after.refusedBeforeHandshake ?? 0) - (before.refusedBeforeHandshake ?? 0)
            #expect(refused >= outcome.cutBeforeAnswer, "the daemon counted \(refused) cut; the storm saw \(outcome)")
            let known = (after.fromKnownPeers ?? 0) - (before.fromKnownPeers ?? 0)
            #expect(known == 10, "the friend's 10 connections, and none of the storm's, came as a known peer's")
            #expect(daemon.log.contains("before their TLS handshake"), "the offenders are named in the log")
            #expect(try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).inbox == 14)
        }

        /// 1,024 TLS connections at once, each presenting a client certificate of about 95 KB (DER;
        /// 1,300 names, as an attacker would pad one), from a Python client: hexd reads each
        /// certificate up to its cap and refuses it, and the memory those handshakes took goes back
        /// to the system once they end. Handshakes are not budgeted here: what is tested is what a
        /// burst that got in leaves behind.
        @Test func theMemoryABurstOfLargeCertificatesTookComesBack() async throws {
            let directory = try TemporaryDirectory()
            let names = (1...1_300).map { "DNS.\($0) = \(String(repeating: "a", count: 60)).\($0).example" }
            let config =
                "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n[dn]\nCN = padded\n[ext]\n"
                + "basicConstraints = CA:FALSE\nsubjectAltName = @alt\n[alt]\n" + names.joined(separator: "\n") + "\n"
            #expect(FileManager.default.createFile(atPath: directory.file("padded.cnf"), contents: Data(config.utf8)))
            #expect(FileManager.default.createFile(atPath: directory.file("hold.py"), contents: Data(Self.holder.utf8)))
            let openssl = try ExternalTool.require("openssl")
            let python = try ExternalTool.require("python3")
            let made = try await PackageExecutable.run(
                openssl,
                [
                    "req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1", "-config",
                    directory.file("padded.cnf"),
                    "-keyout", directory.file("padded.key"), "-out", directory.file("padded.crt"),
                    "-outform", "PEM",
                ])
            let der = try await PackageExecutable.run(
                openssl, ["x509", "-in", directory.file("padded.crt"), "-outform", "DER"])
            #expect(made.status == 0 && der.standardOutput.utf8.count > 90_000, "a certificate of about 95 KB (DER)")
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--stranger-handshakes", "1000000", "--log-level", "warning"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            try await Task.sleep(for: .seconds(1))
            let before = try #require(ProcessFigures.residentBytes(of: daemon.pid))

            let holder = Task {
                try await PackageExecutable.run(
                    python,
                    [
                        directory.file("hold.py"), directory.file("padded.crt"),
                        directory.file("padded.key"),
                        String(port), "1024", "3",
                    ], timeout: .seconds(60))
            }
            let pid = daemon.pid
            let sampler = Task {
                var peak = before
                while !Task.isCancelled {
                    peak = max(peak, ProcessFigures.residentBytes(of: pid) ?? 0)
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return peak
            }
            let held = try await holder.value
            sampler.cancel()
            let peak = await sampler.value
            #expect(held.status == 0 && held.standardOutput.hasPrefix("1024"), "\(held.standardError)")
            #expect(peak > before + (30 << 20), "the burst took memory: \(before >> 20) MiB before, \(peak >> 20) held")
            try await waitUntil("the daemon's memory is back within 20 MiB of before", timeout: .seconds(10)) {
                (ProcessFigures.residentBytes(of: daemon.pid) ?? .max) <= before + (20 << 20)
            }
        }

        /// Opens COUNT TLS connections at once with the certificate CRT (key KEY) to 127.0.0.1:PORT
        /// from 128 loopback addresses, prints how many completed their side of the handshake,
        /// holds them for SECONDS, and closes them all.
        static let holder = #"""
            import asyncio, resource, ssl, sys
            cert, key = sys.argv[1], sys.argv[2]
            port, count, seconds = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            ctx.load_cert_chain(cert, key)

            async def one(index):
                return await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", port, ssl=ctx, local_addr=("127.23.0.%d" % (index % 128 + 1), 0)), 30)

            async def main():
                held = await asyncio.gather(*(one(index) for index in range(count)))
                print(len(held), flush=True)
                await asyncio.sleep(seconds)
                for _, writer in held:
                    writer.transport.abort()

            asyncio.run(main())
            """#

        private func store(_ description: String, from identity: TLSIdentity) -> Envelope {
            .store(
                HexJM(
                    senderUUID: identity.deviceID.uppercaseText, senderName: "Friend", hexDescription: description,
                    hexColor: "#3498DB", links: [LinkJM(url: "https://example.com/flood")]),
                versionID: HexdVersion.current, messageID: UUID().uuidString)
        }

        private func expectStored(
            _ envelope: Envelope, port: UInt16, as identity: TLSIdentity, from source: IPAddress? = nil
        ) async throws {
            let answer = try await exchange([envelope], port: port, as: identity, from: source).first
            #expect(answer?.status == .stored, "\(String(describing: answer))")
        }
    }
}
