import Foundation
import HexControl
import HexHarness
import HexKit
import HexNet
import HexTestSupport
import Testing

extension ProcessTests {
    /// The outbox with real daemons: a send survives a lost Ack, a peer that is away, a kill -9
    /// of its sender, and ends for good only by an Ack, a refusal, expiry or the user.
    @Suite struct OutboxTests {
        /// A TCP relay in front of a receiver that lets every envelope through but drops the
        /// receiver's first answer on every other connection (the 1st, 3rd, ...): the receiver
        /// has committed the hex, the sender never hears it. The other connections are closed
        /// once they have carried one answer, so every send meets a dropping connection first.
        /// It ends once it has relayed as many connections as it was told, or its lifetime ends.
        ///
        /// It counts turns of each connection, so it works over TLS without reading it: the
        /// client speaks (ClientHello), the server answers (its handshake flight), the client
        /// speaks (its Finished and the envelope), and the server's next bytes are the Ack (hexd
        /// writes its session ticket with it, in one segment).
        static let relay = #"""
            import select, socket, sys, time

            target, port_file, lifetime, expected = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
            listener = socket.create_server(("127.0.0.1", 0))
            with open(port_file, "w") as announced:
                announced.write(str(listener.getsockname()[1]))
            deadline = time.time() + lifetime
            connections, opened, dropped = [], 0, 0

            def close(connection):
                connections.remove(connection)
                connection["client"].close()
                connection["server"].close()

            while time.time() < deadline and (opened < expected or connections):
                sockets = [listener] + [s for c in connections for s in (c["client"], c["server"])]
                for ready in select.select(sockets, [], [], 0.2)[0]:
                    if ready is listener:
                        client = listener.accept()[0]
                        opened += 1
                        connections.append({"client": client, "server": socket.create_connection(("127.0.0.1", target)),
                                            "turn": 0, "drops": opened % 2 == 1})
                        continue
                    connection = next((c for c in connections if ready in (c["client"], c["server"])), None)
                    if connection is None:
                        continue
                    data = ready.recv(65536)
                    if not data:
                        close(connection)
                        continue
                    from_client = ready is connection["client"]
                    if (connection["turn"] % 2 == 0) == from_client:
                        connection["turn"] += 1
                    if connection["turn"] == 4:
                        if connection["drops"]:
                            dropped += 1
                            print("dropped", dropped, flush=True)
                        else:
                            connection["client"].sendall(data)
                        close(connection)
                        continue
                    (connection["server"] if from_client else connection["client"]).sendall(data)
            """#

        /// Hexes sent through the relay, each dropped once.
        static let sends = 10

        @Test func aLostAckIsRetriedWithTheSameMessageIDAndNothingIsStoredTwice() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            let graceStatus = try await grace.hexctlJSON(StatusReport.self, ["status"])
            let directory = try TemporaryDirectory()
            #expect(FileManager.default.createFile(atPath: directory.file("relay.py"), contents: Data(Self.relay.utf8)))
            let portFile = directory.file("port")
            let relay = Task.detached {
                try await PackageExecutable.run(
                    "/usr/bin/env",
                    [
                        "python3", directory.file("relay.py"), String(graceStatus.tcpPort), portFile, "120",
                        String(2 * Self.sends),
                    ],
                    timeout: .seconds(120))
            }
            var relayPort = ""
            try await waitUntil("the relay listens", timeout: .seconds(10)) {
                relayPort = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
                return !relayPort.isEmpty
            }

            let sends = Self.sends
            var ids: [String] = []
            for index in 0..<sends {
                let id = UUID().uuidString
                ids.append(id)
                let first = try await ada.hexctl([
                    "send", "--to", "127.0.0.1:" + relayPort, "--message-id", id, "https://example.com/\(index)",
                ])
                #expect(
                    first.status == 75 && first.standardError.contains("queued as \(id)"),
                    "the Ack was lost: \(first.standardError)")
                let again = try await ada.hexctl(["outbox", "retry", String(id.prefix(8))])
                // The outbox may have retried it first, on its own; then it is gone already.
                #expect(
                    again.status == 0 && again.standardOutput.contains("stored by an earlier attempt")
                        || again.status == 1 && again.standardError.contains("is waiting in the outbox"),
                    "\(again.standardOutput) \(again.standardError)")
            }
            try await waitUntil("the outbox is empty", timeout: .seconds(30)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0
            }
            let stored = try await grace.hexctlJSONLines(HexSummary.self, ["inbox"])
            #expect(stored.count == sends, "each hex stored once, though every one was sent at least twice")
            let relayed = try await relay.value
            #expect(
                relayed.standardOutput.contains("dropped \(sends)\n"),
                "every first Ack was dropped: \(relayed.standardOutput) \(relayed.standardError)")
            let acked = try await ada.events { $0.filter { $0.kind == .sendAcked }.count >= sends }
                .filter { $0.kind == .sendAcked }
            for id in ids {
                #expect(
                    acked.contains { $0.id == id && $0.message?.contains("duplicate") == true },
                    "\(id) was acked as a duplicate")
            }
        }

        @Test func aSendToAPeerThatIsAwayIsDeliveredOnceWhenItComesBack() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            var grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            grace.stop()
            try await waitUntil("Ada hears Grace leave", timeout: .seconds(10)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).peers == 0
            }

            let id = UUID().uuidString
            let away = try await ada.hexctl(["send", "--to", "Grace", "--message-id", id, "https://example.com/later"])
            #expect(
                away.status == 75 && away.standardError.contains("Grace is away")
                    && away.standardError.contains("queued as \(id)"),
                "\(away.standardError)")
            let waiting = try await ada.hexctlJSONLines(OutboxItem.self, ["outbox"])
            #expect(waiting.map(\.messageID) == [id] && waiting.first?.peer == "Grace" && waiting.first?.address == nil)
            #expect(waiting.first?.attempts == 1 && waiting.first?.lastError?.contains("away") == true)

            grace = try await DaemonProcess(name: "Grace", discoveryPort: port, directory: grace.directory)
            try await waitUntil("Grace has the hex", timeout: .seconds(20)) {
                try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox == 1
            }
            #expect(try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0)
            let events = try await ada.events { $0.contains { $0.kind == .sendAcked && $0.id == id } }
                .filter { $0.id == id }
            #expect(events.map(\.kind).filter { $0 != .sendRetrying } == [.sendQueued, .sendAcked], "\(events)")
            #expect(events.contains { $0.kind == .sendRetrying }, "it was retried when Grace came back")
            #expect(try await grace.newestInboxHex()?.links.map(\.url) == ["https://example.com/later"])
        }

        @Test func aQueuedSendOutlivesAKillOfItsSenderAndIsDeliveredOnceAfterTheRestart() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            var ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            var grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            grace.stop()
            let queued = try await ada.hexctl(["send", "--to", "Grace", "--no-wait", "https://example.com/survivor"])
            #expect(
                queued.status == 0 && queued.standardOutput.contains("queued"),
                "\(queued.standardOutput) \(queued.standardError)")
            ada.kill()

            grace = try await DaemonProcess(name: "Grace", discoveryPort: port, directory: grace.directory)
            ada = try await DaemonProcess(name: "Ada", discoveryPort: port, directory: ada.directory)
            try await waitUntil("Grace has the hex", timeout: .seconds(20)) {
                try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox == 1
            }
            try await waitUntil("Ada's outbox is empty", timeout: .seconds(10)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0
            }
            #expect(try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox == 1)
        }

        @Test func anUndeliverableSendExpiresOrIsCancelledWithAnEvent() async throws {
            let ada = try await DaemonProcess(
                name: "Ada", discoveryPort: try DaemonProcess.freeDiscoveryPort(),
                extraArguments: ["--outbox-ttl", "2"])
            // Nothing listens on port 9 of the loopback: every attempt is refused at once.
            let expiring = UUID().uuidString
            let first = try await ada.hexctl([
                "send", "--to", "127.0.0.1:9", "--message-id", expiring, "https://example.com/never",
            ])
            #expect(first.status == 75 && first.standardError.contains("queued as"), "\(first.standardError)")
            let cancelled = UUID().uuidString
            #expect(
                try await ada.hexctl(["alert", "--to", "127.0.0.1:9", "--message-id", cancelled, "--no-wait", "hello"])
                    .status == 0)
            let cancel = try await ada.hexctl(["outbox", "cancel", String(cancelled.prefix(8))])
            #expect(
                cancel.status == 0 && cancel.standardOutput.contains("cancelled alert \(cancelled)"),
                "\(cancel.standardOutput) \(cancel.standardError)")
            #expect(try await ada.hexctl(["outbox", "cancel", cancelled]).status == 1, "it is gone")

            let events = try await ada.events { $0.filter { $0.kind == .sendFailed }.count == 2 }
            let failed = events.filter { $0.kind == .sendFailed }
            #expect(failed.contains { $0.id == expiring && $0.message?.contains("expired") == true }, "\(events)")
            #expect(failed.contains { $0.id == cancelled && $0.message == "cancelled" }, "\(events)")
            let retries = events.filter { $0.kind == .sendRetrying && $0.id == expiring }
            #expect(retries.count >= 2, "it was retried before it expired")
            #expect(try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0)
        }

        /// The round read two sends for one address; the user cancels the second while the first
        /// is on the wire. It never goes out: the next send to that address comes right after the first.
        @Test func aSendCancelledWhileTheOneBeforeItIsOnTheWireNeverGoesOut() async throws {
            let directory = try TemporaryDirectory()
            let address = try #require(IPAddress("127.0.0.78"))
            let port = try StreamListener.tcp(address: address, port: 0).port  // closed again: refused
            let destination = "127.0.0.78:\(port)"
            let discoveryPort = try DaemonProcess.freeDiscoveryPort()
            var ada = try await DaemonProcess(name: "Ada", discoveryPort: discoveryPort)
            let ids = [UUID().uuidString, UUID().uuidString]
            for (index, id) in ids.enumerated() {
                let queued = try await ada.hexctl([
                    "send", "--to", destination, "--no-wait", "--message-id", id, "https://example.com/\(index)",
                ])
                #expect(queued.status == 0, "\(queued.standardError)")
            }
            // Restarted with the receiver up, Ada finds both due at once: one round, one lane.
            ada.stop()
            let peer = try HoldingPeer(address: address, port: port, directory: directory)
            ada = try await DaemonProcess(name: "Ada", discoveryPort: discoveryPort, directory: ada.directory)
            try await waitUntil("the first send is on the wire", timeout: .seconds(20)) { !peer.received.isEmpty }
            let first = try #require(peer.received.first)
            let second = try #require(ids.first { $0 != first })
            let cancel = try await ada.hexctl(["outbox", "cancel", second])
            #expect(cancel.status == 0, "\(cancel.standardError)")
            peer.release()
            // The lane goes on at once from the first's Ack: to the cancelled one, if anywhere.
            _ = try await ada.events { $0.contains { $0.kind == .sendAcked && $0.id == first } }
            let later = UUID().uuidString
            let sent = try await ada.hexctl([
                "send", "--to", destination, "--message-id", later, "--timeout", "20", "https://example.com/later",
            ])
            #expect(sent.status == 0, "\(sent.standardError)")
            #expect(peer.received == [first, later], "the cancelled \(second) went out: \(peer.received)")
            #expect(try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0)
        }

        @Test func killingBothDaemonsOverAndOverLosesNothingAndStoresNothingTwice() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            var ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            var grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            let total = 2_000
            let rounds = 5
            let ids = (0..<total).map { _ in UUID() }
            var queued = 0
            var refusedWhileDown = 0
            for round in 0..<rounds {
                // Queue this round's share; on odd rounds Ada is killed halfway, while a request is
                // on its way (the kill races the request made beside it).
                let end = total * (round + 1) / rounds
                let storedBefore = try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox
                let halfway = round % 2 == 1 ? (queued + end) / 2 : nil
                var killer: Task<Void, Never>?
                var client: ControlClient?
                var failuresInARow = 0
                while queued < end {
                    if queued == halfway, killer == nil {
                        let victim = ada
                        killer = Task { victim.kill() }
                    }
                    do {
                        let connected = try client ?? ControlClient(socketPath: ada.dataDirectory + "/hexd.sock")
                        client = connected
                        try await Self.queue(index: queued, id: ids[queued], on: connected)
                        queued += 1
                        failuresInARow = 0
                    } catch let refusal as Refusal {
                        // The daemon answered, and not with "queued": that is a failure, not a crash to ride out.
                        throw refusal
                    } catch {
                        // Ada died mid-request: the same id is queued again once it is back,
                        // whether or not it had committed the first one.
                        failuresInARow += 1
                        guard failuresInARow <= 3 else { throw error }
                        refusedWhileDown += 1
                        client = nil
                        await killer?.value
                        if !ada.isRunning {
                            ada = try await DaemonProcess(name: "Ada", discoveryPort: port, directory: ada.directory)
                        }
                    }
                }
                await killer?.value
                // Then, with deliveries under way, both are killed and restarted.
                try await waitUntil("Grace stores some of round \(round)", timeout: .seconds(60)) {
                    try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox > storedBefore
                }
                ada.kill()
                grace.kill()
                grace = try await DaemonProcess(name: "Grace", discoveryPort: port, directory: grace.directory)
                ada = try await DaemonProcess(name: "Ada", discoveryPort: port, directory: ada.directory)
            }
            try await waitUntil("Ada's outbox is empty", timeout: .seconds(240)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0
            }
            let stored = try await grace.hexctlJSONLines(HexSummary.self, ["inbox"])
            let descriptions = Set(stored.map(\.hexDescription))
            #expect(stored.count == total, "\(stored.count) stored of \(total)")
            #expect(
                descriptions.count == total && descriptions == Set((0..<total).map { "hex \($0)" }), "every hex once")
            #expect(refusedWhileDown > 0, "Ada was killed while hexes were being queued")
        }

        /// Sends the user waits for (`send`, which attempts the entry it queued) beside sends left
        /// to the delivery loop (`--no-wait`, which wakes it), all to one peer: whoever attempts
        /// an entry, it goes on the wire once, so each is acked once, and never as a duplicate.
        /// The outbox before its state machine sent entries twice here (the loop's round read an
        /// entry the user's attempt then settled, or the two both found it not under way).
        @Test func sendsTheUserWaitsForBesideTheDeliveryLoopGoOutOnce() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            #expect(try await ada.hexctl(["wait", "--peer", "Grace", "--timeout", "10"]).status == 0)
            let rounds = 4
            let perRound = 12
            var ids: [String] = []
            for round in 0..<rounds {
                let batch = (0..<perRound).map { _ in UUID().uuidString }
                ids += batch
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, id) in batch.enumerated() {
                        let wait = index % 2 == 0
                        group.addTask {
                            let url = "https://example.com/\(round)/\(index)"
                            let sent = try await ada.hexctl(
                                ["send", "--to", "Grace", "--message-id", id, url]
                                    + (wait ? [] : ["--no-wait"]))
                            #expect(sent.status == 0, "\(sent.standardOutput) \(sent.standardError)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await waitUntil("Ada's outbox is empty", timeout: .seconds(30)) {
                try await ada.hexctlJSON(StatusReport.self, ["status"]).outbox == 0
            }
            // A last send, once all is quiet, so that the events read run past any second attempt.
            let last = UUID().uuidString
            #expect(
                try await ada.hexctl(["send", "--to", "Grace", "--message-id", last, "https://example.com/last"])
                    .status == 0)
            #expect(try await grace.hexctlJSON(StatusReport.self, ["status"]).inbox == ids.count + 1)
            let acked = try await ada.events { $0.contains { $0.kind == .sendAcked && $0.id == last } }
                .filter { $0.kind == .sendAcked }
            for id in ids {
                let acks = acked.filter { $0.id == id }
                #expect(acks.count == 1, "\(id) went out \(acks.count) times: \(acks.map { $0.message ?? "" })")
            }
            #expect(!acked.contains { $0.message == "duplicate" }, "no send reached Grace twice")
        }

        /// Queues hex `index` with the message id `id` for `peer`, not waiting for its delivery.
        private static func queue(
            index: Int, id: UUID, to peer: String = "Grace", on client: ControlClient
        ) async throws {
            let link = LinkJM(url: "https://example.com/\(index)", linkDescription: "", service: .unknown)
            let draft = HexDraft(description: "hex \(index)", links: [link])
            let options = SendOptions(to: peer, wait: false, messageID: id)
            let response = try await client.request(.send(draft, options), timeout: .seconds(10))
            if let error = response.error { throw Refusal(answer: "\(error)") }
            guard response.queued?.messageID == id.uuidString else {
                throw Refusal(answer: "no queued answer for \(id)")
            }
        }

        /// The daemon answered a send with something other than "queued".
        private struct Refusal: Error, CustomStringConvertible {
            let answer: String
            var description: String { "the daemon refused to queue: \(answer)" }
        }
    }
}
