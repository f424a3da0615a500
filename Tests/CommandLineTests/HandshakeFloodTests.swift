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

        /// Bursts of TLS connections from a Python client, each burst held open, then closed: first
        /// 1,024 presenting a client certificate of about 95 KB (DER; 1,300 names, as an attacker
        /// would pad one), which hexd reads up to its cap and refuses; then 4,096 with an ordinary
        /// one, which complete. After each, the memory the handshakes took goes back to the system:
        /// no stranger's session stays in the server's cache, and no wait of theirs in the
        /// reactor's deadlines, to pin pages of freed memory. Handshakes are not budgeted here:
        /// what is tested is what a burst that got in leaves behind.
        @Test func theMemoryBurstsOfHandshakesTookComesBack() async throws {
            let directory = try TemporaryDirectory()
            let names = (1...1_300).map { "DNS.\($0) = \(String(repeating: "a", count: 60)).\($0).example" }
            let config =
                "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n[dn]\nCN = padded\n[ext]\n"
                + "basicConstraints = CA:FALSE\nsubjectAltName = @alt\n[alt]\n" + names.joined(separator: "\n") + "\n"
            #expect(FileManager.default.createFile(atPath: directory.file("padded.cnf"), contents: Data(config.utf8)))
            #expect(FileManager.default.createFile(atPath: directory.file("hold.py"), contents: Data(Self.holder.utf8)))
            let openssl = try ExternalTool.require("openssl")
            let python = try ExternalTool.require("python3")
            for (name, extra) in [
                ("padded", ["-config", directory.file("padded.cnf")]), ("ordinary", ["-subj", "/CN=x"]),
            ] {
                let made = try await PackageExecutable.run(
                    openssl,
                    ["req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "1"] + extra + [
                        "-keyout", directory.file("\(name).key"), "-out", directory.file("\(name).crt"),
                        "-outform", "PEM",
                    ])
                #expect(made.status == 0, "\(made.standardError)")
            }
            let der = try await PackageExecutable.run(
                openssl, ["x509", "-in", directory.file("padded.crt"), "-outform", "DER"])
            #expect(der.standardOutput.utf8.count > 90_000, "a certificate of about 95 KB (DER)")
            let daemon = try await DaemonProcess(
                name: "Target", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--stranger-handshakes", "1000000", "--log-level", "warning"])
            let port = try await daemon.hexctlJSON(StatusReportShape.self, ["status"]).tcpPort
            try await Task.sleep(for: .seconds(1))
            let before = try #require(ProcessFigures.residentBytes(of: daemon.pid))
            // All the padded ones at once, as before hexd refuses any; the ordinary ones 256 at a time,
            // under hexd's cap of handshakes under way.
            for (certificate, count, atOnce) in [("padded", 1_024, 1_024), ("ordinary", 4_096, 256)] {
                let arguments = [
                    directory.file("hold.py"), directory.file("\(certificate).crt"),
                    directory.file("\(certificate).key"), String(port), String(count), String(atOnce), "3",
                ]
                async let holder = PackageExecutable.run(python, arguments, timeout: .seconds(90))
                let pid = daemon.pid
                let sampler = Task {
                    var peak = before
                    while !Task.isCancelled {
                        peak = max(peak, ProcessFigures.residentBytes(of: pid) ?? 0)
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    return peak
                }
                let held = try await holder
                sampler.cancel()
                let peak = await sampler.value
                #expect(
                    held.status == 0 && held.standardOutput.hasPrefix("\(count)"),
                    "\(certificate): \(held.standardError.suffix(300))")
                #expect(
                    peak > before + (30 << 20),
                    "\(certificate): the burst took memory: \(before >> 20) MiB before, \(peak >> 20) held")
                try await waitUntil("\(certificate): the memory is back within 20 MiB of before", timeout: .seconds(10))
                {
                    (ProcessFigures.residentBytes(of: daemon.pid) ?? .max) <= before + (20 << 20)
                }
            }
        }

        /// Opens COUNT TLS connections with the certificate CRT (key KEY) to 127.0.0.1:PORT from
        /// 512 loopback addresses, AT_ONCE handshakes at a time, prints how many completed their
        /// side of the handshake, holds them all for SECONDS, and closes them all.
        static let holder = #"""
            import asyncio, resource, ssl, sys
            cert, key = sys.argv[1], sys.argv[2]
            port, count, at_once, seconds = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            ctx.load_cert_chain(cert, key)

            async def one(index, gate):
                host = "127.23.%d.%d" % (index % 512 // 128, index % 128 + 1)
                async with gate:
                    return await asyncio.wait_for(asyncio.open_connection(
                        "127.0.0.1", port, ssl=ctx, local_addr=(host, 0)), 30)

            async def main():
                gate = asyncio.Semaphore(at_once)
                held = await asyncio.gather(*(one(index, gate) for index in range(count)))
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
