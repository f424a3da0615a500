import Glibc
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    @Suite struct HexlistAndAlertTests {
        @Test func myHexlistIsKeptInOrderAndSentFromTheCommandLine() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }

            // Links from standard input, as a HexJM object; a flag overrides its colour.
            let file =
                ##"{"hexDescription":"From a file","hexColor":"#112233","##
                + ##""links":[{"url":"https://a.example/1","linkDescription":"one","service":"Dropbox"}]}"##
            let added = try await ada.hexctl(
                ["hexlist", "add", "--file", "-", "--color", "#abcdef", "--json"], input: Data(file.utf8))
            #expect(added.status == 0, "\(added.standardError)")
            let fromFile = try ControlCoding.decode(Hex.self, from: Array(added.standardOutput.utf8))
            #expect(
                fromFile.hexDescription == "From a file" && fromFile.hexColor == "#ABCDEF"
                    && fromFile.links.first?.service == .dropbox)
            #expect(try await ada.hexctl(["hexlist", "add", "-d", "Second", "https://b.example"]).status == 0)
            #expect(
                try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == [
                    "Second", "From a file",
                ])
            #expect(
                try await ada.hexctl(["hexlist", "move", String(fromFile.id.uuidString.prefix(8)), "0"]).status == 0)
            #expect(
                try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == [
                    "From a file", "Second",
                ])

            let sent = try await ada.hexctl([
                "hexlist", "send", String(fromFile.id.uuidString.prefix(8)), "--to", "grace",
            ])
            #expect(sent.status == 0 && sent.standardOutput.hasPrefix("stored by Grace"), "\(sent.standardError)")
            let received = try #require(try await grace.newestInboxHex())
            #expect(
                received.hexDescription == "From a file" && received.senderName == "Ada"
                    && received.links.first?.url == "https://a.example/1")

            #expect(try await ada.hexctl(["hexlist", "remove", String(fromFile.id.uuidString.prefix(8))]).status == 0)
            #expect(try await ada.hexctlJSONLines(HexSummary.self, ["hexlist"]).map(\.hexDescription) == ["Second"])
            #expect(
                try await ada.hexctl(["hexlist", "add", "--color", "blue", "https://c.example"]).status == 64,
                "a bad colour is a usage error")
            #expect(try await ada.hexctl(["send", "--to", "grace", "not a url"]).status == 64)
        }

        @Test func anAlertIsDeliveredAndShownAsAnEvent() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            let result = try await ada.hexctl(["alert", "--to", "Grace", "Lunch", "at", "noon?"])
            #expect(
                result.status == 0 && result.standardOutput.hasPrefix("received by Grace"), "\(result.standardError)")
            let events = try await grace.hexctl(["watch", "--until", "alertReceived", "--timeout", "20"])
            #expect(
                events.status == 0 && events.standardOutput.contains("\"Lunch at noon?\""),
                "the words are joined: \(events.standardOutput)")
        }

        @Test func aBlockedPeerCannotAlertEither() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            #expect(try await grace.hexctl(["wait", "--peer", "Ada", "--timeout", "10"]).status == 0)
            // The first hex pins Ada's key on Grace's side; the block then names that key.
            #expect(try await ada.hexctl(["send", "--to", "Grace", "https://example.com/first"]).status == 0)
            #expect(try await ada.hexctl(["alert", "--to", "Grace", "before"]).status == 0)
            #expect(try await grace.hexctl(["block", "Ada"]).status == 0)
            let refused = try await ada.hexctl(["alert", "--to", "Grace", "pay this invoice"])
            #expect(
                refused.status == 77 && refused.standardError.contains("Grace blocked you."),
                "\(refused.standardError)")
            #expect(try await grace.hexctl(["unblock", "Ada"]).status == 0)
            #expect(try await ada.hexctl(["alert", "--to", "Grace", "after"]).status == 0)
            let alerts = try await grace.events { $0.contains { $0.message == "after" } }
                .filter { $0.kind == .alertReceived }
            #expect(alerts.map(\.message) == ["before", "after"], "the blocked alert never reached Grace's user")
            // An Alert names no sender: the key its connection proved does, by its ID and name.
            let adaID = try await ada.hexctlJSON(StatusReport.self, ["status"]).peerUUID
            #expect(alerts.allSatisfy { $0.peerUUID == adaID && $0.peer == "Ada" }, "\(alerts)")
            #expect(grace.log.contains("alert from Ada (\(adaID)) at 127.0.0.1:"), "the log names it too")
        }

        /// The block of a peer that never sent a hex (so its key is pinned to nothing) holds for
        /// its Alerts: they are refused by the ID its key proves, and never kept.
        @Test func aBlockHoldsForAlertsOfAPeerThatSentNoHex() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            #expect(try await grace.hexctl(["wait", "--peer", "Ada", "--timeout", "10"]).status == 0)
            #expect(try await ada.hexctl(["alert", "--to", "Grace", "before"]).status == 0)
            #expect(try await grace.hexctl(["block", "Ada"]).status == 0)
            let refused = try await ada.hexctl(["alert", "--to", "Grace", "pay this invoice"])
            #expect(
                refused.status == 77 && refused.standardError.contains("Grace blocked you."),
                "\(refused.standardOutput) \(refused.standardError)")
            let kept = try await grace.hexctl(["alerts"])
            #expect(kept.status == 0 && kept.standardOutput.contains("before"), "\(kept.standardOutput)")
            #expect(!kept.standardOutput.contains("invoice"), "the blocked Alert was not kept: \(kept.standardOutput)")
        }

        @Test func aSenderIsBlockedByNameOrUUIDPrefixAndOtherwiseRefused() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            try await waitUntil("Ada lists Grace", timeout: .seconds(10)) {
                try await ada.hexctlJSONLines(PeerInfo.self, ["peers"]).contains { $0.name == "Grace" }
            }
            let graceUUID = try await grace.hexctlJSON(StatusReportShape.self, ["status"]).peerUUID
            #expect(try await ada.hexctlJSON([String].self, ["block", "grace"]) == [graceUUID], "by name, any case")
            #expect(
                try await ada.hexctlJSON([String].self, ["unblock", String(graceUUID.prefix(8))]).isEmpty,
                "by a UUID prefix")
            let unknown = try await ada.hexctl(["block", "nobody"])
            #expect(unknown.status == 64 && unknown.standardError.contains("neither a peer's ID nor the name"))
            #expect(
                try await ada.hexctlJSON([String].self, ["block", "6f9619ff-8b86-4011-b42d-00c04fc964ff"]) == [
                    "6F9619FF-8B86-4011-B42D-00C04FC964FF"
                ],
                "any UUID, seen or not")
            // Devices of other kinds, by the ID forms their carriers registered in the daemon.
            let certified = "LocalSend:" + String(repeating: "ab", count: 32)
            #expect(
                try await ada.hexctlJSON([String].self, ["block", certified]).contains(
                    "localsend:" + String(repeating: "AB", count: 32)),
                "a certificate proves it: blocked, in its spelling")
            for (unproved, why) in [
                ("localsend-http:3f2a", "has LocalSend's encryption off"),
                ("quickshare:AB12", "is a Quick Share device, which has no key"),
            ] {
                let refused = try await ada.hexctl(["block", unproved])
                #expect(refused.status == 64 && refused.standardError.contains(why), "\(refused.standardError)")
                #expect(refused.standardError.contains("nothing proves who sends from it"))
            }
        }

        @Test func waitReturnsOnceTheDaemonAndThePeerAreThere() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let absent = try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "0.5"])
            #expect(absent.status == 75 && absent.standardError.contains("Grace was not listed in time"))
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            let found = try await ada.hexctl(["wait", "--peer", "grace", "--timeout", "10"])
            #expect(found.status == 0 && found.standardOutput.contains("\"Grace\" is listed"), "\(found.standardError)")
            grace.stop()
            let nobody = try await PackageExecutable.run(
                "hexctl", ["wait", "--timeout", "0.3", "--data-dir", grace.dataDirectory])
            #expect(nobody.status == 75 && nobody.standardError.contains("hexd did not answer in time"))
        }

        @Test func noWaitReturnsOnceQueuedOrWrittenEvenIfThePeerNeverAnswers() async throws {
            let daemon = try await DaemonProcess(name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            // A plaintext peer that accepts and then neither reads, answers nor closes (over TLS
            // the handshake itself needs answers, so this one is sent to as to a legacy peer).
            let silent = try StreamListener.tcp(address: .loopback, port: 0)
            let holder = Task {
                var held: [Socket] = []
                while true { held.append(try await silent.accept()) }
            }
            let written = try await daemon.hexctl([
                "send", "--to", "127.0.0.1:\(silent.port)", "--legacy", "--no-queue", "--no-wait", "--timeout", "30",
                "https://example.com",
            ])
            #expect(
                written.status == 0 && written.standardOutput.contains("written"),
                "\(written.standardOutput) \(written.standardError)")
            let queued = try await daemon.hexctl([
                "send", "--to", "127.0.0.1:\(silent.port)", "--legacy", "--no-wait", "--timeout", "30",
                "https://example.com",
            ])
            #expect(
                queued.status == 0 && queued.standardOutput.contains("queued"),
                "\(queued.standardOutput) \(queued.standardError)")
            let outbox = try await daemon.hexctl(["outbox"])
            #expect(
                outbox.standardOutput.contains("127.0.0.1:\(silent.port)"),
                "the send waits in the outbox: \(outbox.standardOutput)")
            holder.cancel()
        }

        @Test func inputMistakesAreReportedAsGiven() async throws {
            let daemon = try await DaemonProcess(name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let empty = try await daemon.hexctl(["send", "--to", "127.0.0.1:9", "--file", "-"], input: Data("[]".utf8))
            #expect(empty.status == 64 && empty.standardError.contains("- holds no link"), "\(empty.standardError)")
            let notURL = try await daemon.hexctl(["share", "--provider", "url", "--save", "notaurl"])
            #expect(
                notURL.status != 0 && notURL.standardError.contains("notaurl is not a URL")
                    && !notURL.standardError.contains("/notaurl"),
                "\(notURL.standardError)")
        }

        @Test func sigintStopsTheDaemonCleanlyToo() async throws {
            let daemon = try await DaemonProcess(name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            kill(daemon.pid, SIGINT)
            try await waitUntil("hexd exits", timeout: .seconds(10)) { !daemon.isRunning }
            #expect(
                daemon.log.contains("SIGINT: stopping")
                    && !FileManager.default.fileExists(atPath: daemon.dataDirectory + "/hexd.sock"))
        }
    }
}
