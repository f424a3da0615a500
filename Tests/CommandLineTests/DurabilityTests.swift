import Foundation
import Glibc
import HexControl
import HexHarness
import HexKit
import HexNet
import HexStore
import HexTLS
import HexTestSupport
import HexTestTools
import Testing

extension ProcessTests {
    /// An Ack is a promise: the log holding a hex is synced to disk before its Ack leaves. Checked
    /// on the real process, with strace attached to it: no code path of its own.
    @Suite struct DurabilityTests {
        /// One system call strace saw, in the order they happened.
        private struct Call {
            enum Kind { case walWrite, walSync, ackWrite }
            var kind: Kind
            var line: Int
        }

        /// The calls of `trace` that matter: writes and syncs of the write-ahead log (descriptor
        /// `wal`), and writes that carry an Ack (plaintext: the envelope; TLS: an encrypted record,
        /// `\27\3\3`, after the handshake). A call split by strace counts where it began (a
        /// write) or where it returned (a sync).
        private static func calls(in trace: String, wal: Int32) -> [Call] {
            var calls: [Call] = []
            // A sync split by strace: the thread's pending sync, and whether it is of the log.
            var pendingSync: [Substring: Bool] = [:]
            for (number, line) in trace.split(separator: "\n").enumerated() {
                let fields = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
                guard fields.count == 2 else { continue }
                let (thread, call) = (fields[0], fields[1].drop { $0 == " " })
                if call.hasPrefix("pwrite64(\(wal),") || call.hasPrefix("write(\(wal),") {
                    calls.append(Call(kind: .walWrite, line: number))
                } else if call.hasPrefix("fsync(") || call.hasPrefix("fdatasync(") {
                    let ofLog = call.hasPrefix("fsync(\(wal)") || call.hasPrefix("fdatasync(\(wal)")
                    if call.contains("<unfinished") {
                        pendingSync[thread] = ofLog
                    } else if ofLog && call.hasSuffix("= 0") {
                        calls.append(Call(kind: .walSync, line: number))
                    }
                } else if call.hasPrefix("<... fsync resumed>") || call.hasPrefix("<... fdatasync resumed>") {
                    if pendingSync.removeValue(forKey: thread) == true && call.hasSuffix("= 0") {
                        calls.append(Call(kind: .walSync, line: number))
                    }
                } else if ["write(", "writev(", "sendto(", "sendmsg("].contains(where: { call.hasPrefix($0) }),
                    call.contains("\\\"Ack\\\"") || call.contains(", \"\\27\\3\\3")
                {
                    calls.append(Call(kind: .ackWrite, line: number))
                }
            }
            return calls
        }

        /// The descriptor the daemon holds its write-ahead log open on.
        private static func walDescriptor(of pid: Int32) throws -> Int32 {
            let directory = "/proc/\(pid)/fd"
            for entry in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + entry)) ?? ""
                if target.hasSuffix("-wal"), let descriptor = Int32(entry) { return descriptor }
            }
            throw SocketError.timedOut("find hexd's write-ahead log among its descriptors")
        }

        /// Writes `stores` on one connection, all at once when `pipelined`, else each after the
        /// last one's Ack, and reads every Ack.
        private func send(
            _ stores: [Envelope], to port: UInt16, over identity: TLSIdentity?, pipelined: Bool
        ) async throws {
            let (socket, connection) = try await peerConnection(to: port, as: identity)
            let batches = pipelined ? [stores] : stores.map { [$0] }
            for batch in batches {
                try await connection.writeLines(batch.map { $0.encodedLine() }, timeout: .seconds(5))
                for _ in batch {
                    guard case .line(let line)? = try await connection.readLine(timeout: .seconds(10)),
                        (try Envelope.decode(from: line)).status == .stored
                    else {
                        throw SocketError.timedOut("read a stored Ack")
                    }
                }
            }
            socket.shutdown()
        }

        @Test func everyAckLeavesAfterTheLogHoldingItsHexIsSynced() async throws {
            let strace = try ExternalTool.require("strace")
            let hexd = try await DaemonProcess(name: "Receiver", discoveryPort: try DaemonProcess.freeDiscoveryPort())
            let port = try await hexd.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let wal = try Self.walDescriptor(of: hexd.pid)
            let directory = try TemporaryDirectory()
            let (identity, _) = try TLSIdentity.loadOrCreate(
                keyPath: directory.file("s.key"), certificatePath: directory.file("s.crt"), commonName: "sender")
            let tracePath = directory.file("trace")
            let tracer = try SpawnedProcess(
                strace,
                [
                    "-f", "-qq", "-p", String(hexd.pid), "-s", "512", "-o", tracePath,
                    "-e", "trace=pwrite64,write,writev,sendto,sendmsg,fsync,fdatasync",
                ])
            try await waitUntil("strace is attached", timeout: .seconds(10)) {
                _ = try await hexd.hexctl(["status"])
                let size = (try? FileManager.default.attributesOfItem(atPath: tracePath))?[.size] as? Int ?? 0
                return size > 0
            }

            // Over TLS the sender is the ID its key derives; in plaintext, a legacy peer's own UUID.
            func stores(_ label: String, _ count: Int, from sender: String) -> [Envelope] {
                (0..<count).map { index in
                    .store(
                        HexJM(
                            senderUUID: sender, senderName: "Sender", hexDescription: "\(label) \(index)",
                            hexColor: "#3498DB", links: [LinkJM(url: "https://example.com/\(label)/\(index)")]),
                        versionID: HexdVersion.current, messageID: UUID().uuidString)
                }
            }
            let senders: [(String, TLSIdentity?, String)] = [
                ("plaintext", nil, UUID().uuidString), ("tls", identity, identity.deviceID.uppercaseText),
            ]
            for (security, identity, sender) in senders {
                try await send(
                    stores("\(security) one by one", 10, from: sender), to: port, over: identity,
                    pipelined: false)
                try await send(
                    stores("\(security) pipelined", 64, from: sender), to: port, over: identity,
                    pipelined: true)
            }
            tracer.send(SIGINT)
            tracer.waitBlocking()
            #expect(try await hexd.hexctlJSONLines(HexSummary.self, ["inbox"]).count == 148)

            let trace = try String(contentsOfFile: tracePath, encoding: .utf8)
            let calls = Self.calls(in: trace, wal: wal)
            let acks = calls.filter { $0.kind == .ackWrite }
            #expect(acks.count >= 22, "\(acks.count) Ack writes: 20 one by one, and at least one per pipelined burst")
            #expect(calls.contains { $0.kind == .walSync }, "the log was synced")
            var lastWrite: Int?
            var syncedSinceWrite = true
            var early: [Int] = []
            for call in calls {
                switch call.kind {
                case .walWrite:
                    lastWrite = call.line
                    syncedSinceWrite = false
                case .walSync:
                    syncedSinceWrite = true
                case .ackWrite:
                    if lastWrite != nil && !syncedSinceWrite { early.append(call.line) }
                }
            }
            #expect(
                early.isEmpty,
                "Acks written before the log holding them was synced, at trace lines \(early.prefix(10))")
        }
        /// A large hex is not "unanswered" for being large: the wait for its Ack grows by two seconds
        /// per MiB, so a 100,000-link hex (7.6 MB) with a 1-second timeout is acked, not left queued;
        /// and a send found stored already reads as a delivery.
        /// A group commit acts on its envelopes together; one that fails (here a trigger makes the
        /// database refuse it) is taken out, and the rest of its batch is stored all the same.
        @Test func aStoreThatFailsInAPipelinedBurstFailsAlone() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let first = try await DaemonProcess(name: "Receiver", discoveryPort: port)
            _ = first.stop()
            let database = try SQLiteConnection(path: first.dataDirectory + "/hexd.sqlite")
            try database.execute(
                """
                CREATE TRIGGER refuse_poison BEFORE INSERT ON hex WHEN NEW.description = 'poison'
                BEGIN SELECT RAISE(ABORT, 'poisoned'); END
                """)
            let hexd = try await DaemonProcess(name: "Receiver", discoveryPort: port, directory: first.directory)
            let tcpPort = try await hexd.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let stores: [Envelope] = (0..<40).map { index in
                .store(
                    HexJM(
                        senderUUID: UUID().uuidString, senderName: "Sender",
                        hexDescription: index == 20 ? "poison" : "burst \(index)",
                        links: [LinkJM(url: "https://example.com/\(index)")]),
                    versionID: HexdVersion.current, messageID: UUID().uuidString)
            }
            let (_, connection) = try await peerConnection(to: tcpPort, as: nil)
            // One write: read together, and acted on as one batch.
            try await connection.writeLines(stores.map { $0.encodedLine() }, timeout: .seconds(5))
            var statuses: [AckStatus?] = []
            for _ in stores {
                guard case .line(let line)? = try await connection.readLine(timeout: .seconds(10)) else { break }
                statuses.append(try Envelope.decode(from: line).status)
            }
            #expect(statuses.count == 40)
            #expect(statuses.enumerated().allSatisfy { index, status in status == (index == 20 ? .failed : .stored) })
            let inbox = try await hexd.hexctlJSONLines(HexSummary.self, ["inbox"]).map(\.hexDescription)
            #expect(inbox.count == 39 && !inbox.contains("poison"))
            #expect(hexd.log.contains("poisoned"), "the refusal is logged")
        }

        @Test func aLargeHexIsAckedWithinItsAllowanceAndARepeatIsADelivery() async throws {
            let port = try DaemonProcess.freeDiscoveryPort()
            let ada = try await DaemonProcess(name: "Ada", discoveryPort: port)
            let grace = try await DaemonProcess(name: "Grace", discoveryPort: port)
            let gracePort = try await grace.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let links = (0..<100_000).map { index in
                #"{"url":"https://example.com/page/\#(index)","linkDescription":"page \#(index)"}"#
            }
            let file = ada.directory.file("links.json")
            let hex =
                ##"{"hexDescription":"large","hexColor":"#3498DB","links":["## + links.joined(separator: ",")
                + "]}"
            #expect(FileManager.default.createFile(atPath: file, contents: Data(hex.utf8)))
            let id = UUID().uuidString
            let started = ContinuousClock.now
            let sent = try await ada.hexctl(
                [
                    "send", "--to", "127.0.0.1:\(gracePort)", "--file", file, "--timeout", "1",
                    "--message-id", id,
                ], timeout: .seconds(60))
            let elapsed = ContinuousClock.now - started
            #expect(sent.status == 0, "acked after \(elapsed): \(sent.standardError)")
            #expect(try await grace.newestInboxHex()?.links.count == 100_000)
            // Sent again under the same id (as a script unsure of the first would): the receiver has
            // it already, and that is a delivery.
            let again = try await ada.hexctl([
                "send", "--to", "127.0.0.1:\(gracePort)", "--message-id", id,
                "--no-queue",
                "https://example.com/again",
            ])
            #expect(
                again.standardOutput.hasPrefix("delivered to") && again.standardOutput.contains("earlier attempt"),
                "\(again.standardOutput)")
            #expect(again.status == 0, "\(again.standardError)")
        }
        /// Schema 9 copies the hex and link tables once. On a disk without room for the copy the
        /// database does not open (the disk is full, it says) and is left as it was; once there is
        /// room it migrates, every hex with its links. The disk is a tmpfs of 8 MiB (root).
        @Test func aMigrationWithoutRoomChangesNothingAndRunsOnceThereIsRoom() throws {
            let disk = try SmallDisk(mebibytes: 8)
            let path = disk.file("hexd.sqlite")
            do { _ = try HexDatabase(path: path, migrations: Array(Schema.migrations.prefix(8))) }
            let long = String(repeating: "x", count: 300)
            do {
                let connection = try SQLiteConnection(path: path)
                try connection.writeTransaction {
                    for index in 0..<2_000 {
                        let id = UUID().uuidString
                        try connection.run(
                            """
                            INSERT INTO hex (id, location, position, sender_uuid, sender_name, description, color,
                                             created_at, checked, size)
                            VALUES (?, 'inbox', ?, 'S', 'N', 'd', '#FFF', 0, 0, 1)
                            """, [.text(id), .integer(Int64(-index))])
                        for link in 0..<2 {
                            try connection.run(
                                "INSERT INTO link VALUES (?, ?, 'L', ?, 'd', 'Box')",
                                [
                                    .text(id), .integer(Int64(link)),
                                    .text("https://x.example/\(long)/\(index)/\(link)"),
                                ])
                        }
                    }
                }
            }
            disk.fill("filler")
            // Room to open and begin, not to copy 1.5 MB of rows.
            var filler = stat()
            #expect(stat(disk.file("filler"), &filler) == 0)
            #expect(truncate(disk.file("filler"), max(0, filler.st_size - (256 << 10))) == 0)
            do {
                _ = try HexDatabase(path: path)
                Issue.record("the database was migrated on a full disk")
            } catch {
                #expect(error is StoreError && "\(error)".contains("full"), "\(error)")
            }
            #expect(unlink(disk.file("filler")) == 0)
            do {
                let untouched = try SQLiteConnection(path: path)
                #expect(try untouched.integer("PRAGMA user_version") == 8)
                #expect(try untouched.integer("SELECT COUNT(*) FROM link") == 4_000)
            }
            let migrated = try HexDatabase(path: path)
            #expect(try migrated.schemaVersion() == Schema.migrations.last?.version)
            let hexes = try migrated.hexes(in: .inbox)
            #expect(hexes.count == 2_000 && hexes.allSatisfy { $0.links.count == 2 })
            // The inbox lists the newest first: the first inserted is the last.
            #expect(hexes.last?.links.map(\.url) == (0..<2).map { "https://x.example/\(long)/0/\($0)" })
        }

        /// On a full disk hexd still starts and serves its user, answers Stores honestly (`failed`,
        /// nothing stored) and takes them again by itself once space returns. It gives its reserve
        /// back to the full disk to start, and sets it aside again once space returns. The disk is
        /// a tmpfs of 8 MiB mounted for the test (root).
        @Test func aDaemonStartsOnAFullDiskAndResumesWhenSpaceReturns() async throws {
            let disk = try SmallDisk(mebibytes: 8)
            let floors = ["--min-free", "0", "--min-free-hard", "2MiB", "--disk-reserve", "1MiB"]
            let port = try DaemonProcess.freeDiscoveryPort()
            func store(_ id: String, to port: UInt16) async throws -> AckStatus? {
                let line = Envelope.store(
                    HexJM(
                        senderUUID: "6F9619FF-8B86-4011-B42D-00C04FC964FF", senderName: "Old",
                        hexDescription: id, hexColor: "#3498DB",
                        links: [LinkJM(url: "https://x.example")]),
                    versionID: "2.0.0", messageID: id
                ).encodedLine()
                let (_, connection) = try await peerConnection(to: port, as: nil)
                try await connection.writeLine(line, timeout: .seconds(5))
                guard case .line(let reply)? = try await connection.readLine(timeout: .seconds(10)) else { return nil }
                return try Envelope.decode(from: reply).status
            }
            let first = try await DaemonProcess(
                name: "Full", discoveryPort: port, directory: disk.directory,
                extraArguments: floors)
            #expect(
                try await store(
                    "before",
                    to: try await first.hexctlJSON(
                        StatusReport.self,
                        ["status"]
                    ).tcpPort) == .stored)
            #expect(try await first.hexctlJSON(StatusReport.self, ["status"]).storage?.reserveBytes == 1 << 20)
            #expect(first.stop() == 0)

            disk.fill("filler")
            let full = try await DaemonProcess(
                name: "Full", discoveryPort: port, directory: disk.directory,
                extraArguments: floors)
            #expect(full.log.contains("gave back the 1.0 MiB reserve"), "\(full.log)")
            let status = try await full.hexctlJSON(StatusReport.self, ["status"])
            #expect(status.storage?.refusing == "every Store" && status.storage?.reserveBytes == 0)
            #expect(try await full.hexctlJSONLines(HexSummary.self, ["inbox"]).map(\.hexDescription) == ["before"])
            #expect(try await store("while full", to: status.tcpPort) == .failed, "refused honestly, not acked")
            #expect(unlink(disk.file("filler")) == 0)
            #expect(try await store("after", to: status.tcpPort) == .stored, "space is back: taken again")
            #expect(
                try await full.hexctlJSONLines(HexSummary.self, ["inbox"]).map(\.hexDescription) == [
                    "after",
                    "before",
                ])
            #expect(
                try await full.hexctlJSON(StatusReport.self, ["status"]).storage?.reserveBytes == 1 << 20,
                "the reserve is set aside again")
        }

        /// A power cut right after a burst is acked loses none of it. The data directory is on
        /// ext4 in an image file on a loop device; once the last Ack is read, hexd is killed and
        /// the image is copied as the device has it: what only the page cache held (anything not
        /// synced) is not in the copy, as after a power cut. The copy is mounted (ext4 replays its
        /// journal), and a daemon started on it must list every acked hex. A file written without
        /// a sync just before the cut shows that the copy does drop unsynced data. (dm-flakey's
        /// `drop_writes` would do the same; this machine's kernel has no device-mapper.)
        @Test func everyAckedHexSurvivesAPowerCut() async throws {
            let work = try TemporaryDirectory()
            let disk = try await LoopDisk(image: work.file("disk.img"), formatting: 128)
            let floors = ["--min-free", "0", "--min-free-hard", "0", "--disk-reserve", "0"]
            let port = try DaemonProcess.freeDiscoveryPort()
            let daemon = try await DaemonProcess(
                name: "Cut", discoveryPort: port, directory: disk.directory,
                extraArguments: floors)
            let tcpPort = try await daemon.hexctlJSON(StatusReport.self, ["status"]).tcpPort
            let ids = (0..<2_000).map { _ in UUID().uuidString }
            let stores = ids.map { id in
                Envelope.store(
                    HexJM(
                        senderUUID: UUID().uuidString, senderName: "Burst", hexDescription: id,
                        hexColor: "#3498DB", links: [LinkJM(url: "https://burst.example/" + id)]),
                    versionID: HexdVersion.current, messageID: id)
            }
            // Four senders at once, each pipelining 500: every Ack read means stored.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for part in 0..<4 {
                    let share = Array(stores[(part * 500)..<((part + 1) * 500)])
                    group.addTask { try await send(share, to: tcpPort, over: nil, pipelined: true) }
                }
                try await group.waitForAll()
            }
            let unsynced = [UInt8](repeating: 0xAB, count: 1 << 20)
            let descriptor = open(disk.file("unsynced"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(descriptor >= 0 && write(descriptor, unsynced, unsynced.count) == unsynced.count)
            close(descriptor)

            // The cut: the process gone at once, the disk's blocks as they stand.
            daemon.kill()
            let copied = try await PackageExecutable.run(
                "/bin/cp",
                [
                    "--sparse=always", disk.image,
                    work.file("cut.img"),
                ])
            try #require(copied.status == 0, "\(copied.standardError)")
            disk.detach()

            let after = try await LoopDisk(image: work.file("cut.img"))
            let survivor = FileManager.default.contents(atPath: after.file("unsynced")).map { [UInt8]($0) }
            #expect(survivor != unsynced, "the copy drops what was never synced, as a power cut does")
            let restarted = try await DaemonProcess(
                name: "Cut", discoveryPort: port, directory: after.directory,
                extraArguments: floors)
            let listed = try await restarted.hexctlJSONLines(HexSummary.self, ["inbox", "--limit", "5000"])
            let missing = Set(ids).subtracting(listed.map(\.hexDescription))
            #expect(missing.count == 0, "acked hexes lost to the cut, of \(ids.count)")
            #expect(restarted.stop() == 0)
        }
    }
}
