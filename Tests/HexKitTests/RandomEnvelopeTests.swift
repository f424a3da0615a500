import HexCommandLine
import HexKit
import HexStore
import HexTestSupport
import Testing

/// Random envelope-like input through decode -> HexManager -> SQLite, checked against the
/// generator's own model of the tolerance rules. Bounded in count (no network, no waits: about
/// 20 s on two cores while other suites run).
@Suite(.timeLimit(.minutes(5))) struct RandomEnvelopeTests {
    static let inputCount = 12_000

    @Test func randomEnvelopesDecodeStoreAndNeverCrash() async throws {
        let seed =
            ProcessInfo.processInfo.environment["HEXD_FUZZ_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        var generator = RandomEnvelopeGenerator(seed: seed)
        let receiver = try Receiver()
        let blocked = Set(generator.senderPool.prefix(2).map { $0.uppercased() })
        for sender in blocked { try receiver.manager.block(senderUUID: sender) }

        var storedMessageIDs: Set<String> = []
        var storedCount = 0
        var tally: [String: Int] = [:]
        var processed = 0
        while processed < Self.inputCount {
            processed += 1
            // Seconds of CPU: give the cooperative pool's other tasks their turns.
            if processed % 50 == 0 { await Task.yield() }
            let (line, expected) = generator.next()
            let context = Comment(
                rawValue: "seed \(seed), input \(processed): \(String(decoding: line.prefix(300), as: UTF8.self))")
            let envelope: Envelope
            do {
                envelope = try Envelope.decode(from: line)
            } catch {
                tally["decode error", default: 0] += 1
                if case .anything = expected { continue }
                guard case .decodeError = expected else {
                    Issue.record("unexpected decode error \(error); \(context.rawValue)")
                    return
                }
                continue
            }
            let outcome = try receiver.manager.receive(envelope)
            let reply = receiver.dialect.reply(to: envelope, outcome: outcome)
            if let reply { #expect((try? Envelope.decode(from: reply.encodedLine())) == reply, context) }
            if case .stored = outcome {
                storedCount += 1
                if let messageID = envelope.messageID { storedMessageIDs.insert(messageID) }
            }
            tally["\(outcome.ackStatus)", default: 0] += 1

            switch expected {
            case .anything:
                continue
            case .decodeError:
                Issue.record("expected a decode error, got \(outcome); \(context.rawValue)")
                return
            case .alert:
                #expect(outcome.ackStatus == .received, context)
            case .unsupported:
                #expect(outcome.ackStatus == .unsupported, context)
            case .invalid:
                #expect(outcome.ackStatus == .invalid, context)
            case .store(let hexJM, let senderUUID, let messageID):
                #expect(envelope.hex == hexJM, context)
                if let senderUUID, blocked.contains(senderUUID.uppercased()) {
                    #expect(outcome.ackStatus == .rejected, context)
                } else if case .stored(let hex) = outcome {
                    #expect(try receiver.manager.hex(id: hex.id) == hex, context)
                    #expect(hex.links.count == hexJM.links?.count ?? 0, context)
                } else {
                    #expect(outcome == .duplicate && messageID.map(storedMessageIDs.contains) == true, context)
                }
            }
        }

        #expect(try receiver.manager.inbox().count == storedCount)
        let check = try SQLiteConnection(path: receiver.directory.file(DataDirectory.databaseName))
        #expect(try check.rows("PRAGMA integrity_check") { $0.string(0) } == ["ok"])
        #expect(
            tally["stored", default: 0] > 1_000 && tally["decode error", default: 0] > 100
                && tally["duplicate", default: 0] > 10
                && tally["rejected", default: 0] > 10 && tally["unsupported", default: 0] > 10
                && tally["invalid", default: 0] > 10,
            "every outcome is exercised: \(tally)")
        print("random envelopes: \(processed) inputs, seed \(seed), outcomes \(tally)")
    }
}
